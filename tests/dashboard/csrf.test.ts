import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { CSP } from '../../src/dashboard/layout.ts'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { csrfOf, type FormClient, formClient, PASSWORD } from './client.ts'

// docs/dashboard.md: a CSRF token on every state-changing dashboard request, plus an Origin check.

let t: TestApp
let client: FormClient
let token: string
beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_LOGIN_PER_MINUTE: '1000' })
  client = formClient(t)
  await client.signUp(`csrf-${Math.random().toString(36).slice(2, 8)}@example.com`)
  token = await client.csrf()
}, 60_000)
afterAll(() => t.close())

const domainCount = async () => {
  const page = await client.get('/domains')
  return Number(/<h2>(\d+) domains?<\/h2>/.exec(page.html)![1])
}

describe('a signed-in form post', () => {
  test('without a token, with a wrong one or another session’s, is refused with a 403 page', async () => {
    const other = formClient(t)
    await other.signUp(`other-${Math.random().toString(36).slice(2, 8)}@example.com`)
    const othersToken = await other.csrf()
    const attempts: Record<string, string>[] = [
      {},
      { _csrf: '' },
      { _csrf: 'x'.repeat(43) },
      { _csrf: othersToken },
    ]
    for (const fields of attempts) {
      const answer = await client.post('/domains', { ...fields, domain_name: 'refused.example' })
      expect(answer.status).toBe(403)
      expect(answer.html).toContain('Request refused')
      expect(answer.headers.get('content-security-policy')).toBe(CSP)
    }
    expect(await domainCount()).toBe(0)
  })

  test('from a foreign Origin, or with no Origin and no Referer, is refused even with the right token', async () => {
    const cases: { origin?: string | null; referer?: string }[] = [
      { origin: 'http://evil.example' },
      { origin: 'http://localhost:3001' },
      { origin: 'https://localhost:3000' },
      { origin: 'null' },
      { origin: null },
      { origin: null, referer: 'http://evil.example/localhost:3000/' },
    ]
    for (const headers of cases) {
      const answer = await client.post('/domains', { _csrf: token, domain_name: 'refused.example' }, headers)
      expect(answer.status).toBe(403)
    }
    // Logout too: a foreign page cannot log the user out.
    expect((await client.post('/logout', { _csrf: token }, { origin: 'http://evil.example' })).status).toBe(
      403,
    )
    expect((await client.get('/domains')).status).toBe(200)
    expect(await domainCount()).toBe(0)
  })

  test('a page opened at another address of this service says to use PUBLIC_URL', async () => {
    const expected = new URL(t.config.publicUrl).origin
    const post = (url: string, origin: string) =>
      t.app.handle(
        new Request(url, {
          method: 'POST',
          headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
          body: 'email=a%40example.com&password=x',
        }),
      )
    const elsewhere = await post('http://127.0.0.1:9/login', 'http://127.0.0.1:9')
    expect(elsewhere.status).toBe(403)
    const page = await elsewhere.text()
    expect(page).toContain(
      `opened at http://127.0.0.1:9, but this service’s address (PUBLIC_URL) is ${expected}`,
    )
    // A foreign site's form keeps the general reason.
    const foreign = await post(`${expected}/login`, 'http://evil.example')
    expect(foreign.status).toBe(403)
    expect(await foreign.text()).toContain('This form was sent from another site')
  })

  test('with the token and the own Origin (or only a same-origin Referer) goes through', async () => {
    const viaOrigin = await client.post('/domains', { _csrf: token, domain_name: 'accepted.example' })
    expect(viaOrigin.status).toBe(303)
    const viaReferer = await client.post(
      '/domains',
      { _csrf: token, domain_name: 'referer.example' },
      { origin: null, referer: `${t.config.publicUrl}/domains` },
    )
    expect(viaReferer.status).toBe(303)
    // The header form, for scripts.
    const viaHeader = await client.post(
      '/domains',
      { domain_name: 'header.example' },
      { headers: { 'x-csrf-token': token } },
    )
    expect(viaHeader.status).toBe(303)
    expect(await domainCount()).toBe(3)
  })
})

describe('forms before login', () => {
  test('login needs the pre-session token of its own page and the own Origin', async () => {
    const email = `pre-${Math.random().toString(36).slice(2, 8)}@example.com`
    await formClient(t).signUp(email)
    const visitor = formClient(t)
    const page = await visitor.get('/login')
    const pre = csrfOf(page.html)
    expect(visitor.jar.get('dw_csrf')).toBe(pre)
    // A forged login (login CSRF) from a page that never had our cookie.
    const forged = formClient(t)
    expect((await forged.post('/login', { _csrf: pre, email, password: PASSWORD })).status).toBe(403)
    expect((await visitor.post('/login', { email, password: PASSWORD })).status).toBe(403)
    const foreign = await visitor.post(
      '/login',
      { _csrf: pre, email, password: PASSWORD },
      { origin: 'http://evil.example' },
    )
    expect(foreign.status).toBe(403)
    const signup = await visitor.post('/signup', {
      _csrf: 'nope',
      email: 'x@example.com',
      password: PASSWORD,
    })
    expect(signup.status).toBe(403)
    expect((await visitor.post('/login', { _csrf: pre, email, password: PASSWORD })).status).toBe(303)
  })

  test('a logged-out post to a signed-in form goes to login, not through', async () => {
    const answer = await formClient(t).post('/domains', { _csrf: token, domain_name: 'anon.example' })
    expect(answer.status).toBe(303)
    expect(answer.location).toBe('/login')
  })
})
