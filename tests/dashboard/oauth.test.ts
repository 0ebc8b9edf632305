import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq, sql } from 'drizzle-orm'
import { users } from '../../infrastructure/db/schema/accounts.ts'
import { oauthIdentities } from '../../infrastructure/db/schema/sessions.ts'
import { startOidcProvider, type TestOidcProvider } from '../support/oidc-provider.ts'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { cookieAttributes, type FormClient, formClient, PASSWORD } from './client.ts'

// OAuth / OpenID Connect login end to end against a real OpenID provider (oidc-provider) on a
// loopback port: the dashboard's redirect, the provider's login and consent, the callback, the
// token exchange, ID token and UserInfo verification, and the session that results. The generic
// provider is discovered from its issuer; the Google, Microsoft and LinkedIn profiles are pointed at
// local providers through their endpoint overrides (Google and LinkedIn at one that puts the email
// into the ID token, as theirs do; the others fetch it from UserInfo).

const PUBLIC_URL = 'http://localhost:3000'
const SECRET = 'a test client secret that is long enough'
const clientFor = (id: string, extra: { auth?: 'client_secret_post'; pkce?: boolean } = {}) => ({
  clientId: `dw-${id}`,
  clientSecret: SECRET,
  redirectUri: `${PUBLIC_URL}/login/oauth/${id}/callback`,
  ...extra,
})

let idp: TestOidcProvider
let vendorIdp: TestOidcProvider
let t: TestApp
beforeAll(async () => {
  idp = await startOidcProvider([clientFor('oidc'), clientFor('microsoft')])
  vendorIdp = await startOidcProvider(
    [clientFor('google'), clientFor('linkedin', { auth: 'client_secret_post', pkce: false })],
    { claimsInIdToken: true },
  )
  const i = idp.issuer
  const v = vendorIdp.issuer
  t = await startTestApp({
    PUBLIC_URL,
    TRUST_PROXY: '1',
    RATE_LIMIT_PUBLIC_PER_MINUTE: '40',
    RATE_LIMIT_LOGIN_PER_MINUTE: '3',
    OAUTH_OIDC_ISSUER: i,
    OAUTH_OIDC_CLIENT_ID: 'dw-oidc',
    OAUTH_OIDC_CLIENT_SECRET: SECRET,
    OAUTH_OIDC_NAME: 'Local IdP',
    OAUTH_GOOGLE_CLIENT_ID: 'dw-google',
    OAUTH_GOOGLE_CLIENT_SECRET: SECRET,
    OAUTH_GOOGLE_ISSUER: v,
    OAUTH_MICROSOFT_CLIENT_ID: 'dw-microsoft',
    OAUTH_MICROSOFT_CLIENT_SECRET: SECRET,
    OAUTH_MICROSOFT_ISSUER: i,
    OAUTH_LINKEDIN_CLIENT_ID: 'dw-linkedin',
    OAUTH_LINKEDIN_CLIENT_SECRET: SECRET,
    // Every endpoint named: no discovery for this one.
    OAUTH_LINKEDIN_ISSUER: v,
    OAUTH_LINKEDIN_AUTHORIZATION_URL: `${v}/auth`,
    OAUTH_LINKEDIN_TOKEN_URL: `${v}/token`,
    OAUTH_LINKEDIN_USERINFO_URL: `${v}/me`,
    OAUTH_LINKEDIN_JWKS_URL: `${v}/jwks`,
  })
}, 60_000)
afterAll(async () => {
  await t?.close()
  await idp?.close()
  await vendorIdp?.close()
})

let counter = 0
/** A fresh client IP per test (TRUST_PROXY=1), so the per-IP limit of one test leaves the others alone. */
const nextIp = () => `198.51.100.${++counter}`
const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`

const idpOf = (provider: string) => (provider === 'google' || provider === 'linkedin' ? vendorIdp : idp)

/** An account at both providers; returns its id (the `sub`). */
function person(claims: { email?: string; email_verified?: boolean; xms_edov?: boolean; name?: string }) {
  const id = `acct-${Math.random().toString(36).slice(2, 10)}`
  idp.accounts.set(id, claims)
  vendorIdp.accounts.set(id, claims)
  return id
}

interface Flow {
  client: FormClient
  ip: string
  authorization: URL
  callback: string
  answer: Awaited<ReturnType<FormClient['get']>>
}

/** Clicks "Continue with …", logs in (and consents) at the provider and follows it back. */
async function viaProvider(
  provider: string,
  account: string,
  options: {
    client?: FormClient
    next?: string
    authorization?: (url: URL) => void
    callback?: (url: URL) => void
    deny?: boolean
    ip?: string
  } = {},
): Promise<Flow> {
  const client = options.client ?? formClient(t)
  const ip = options.ip ?? nextIp()
  const headers = { 'x-forwarded-for': ip }
  const query = options.next === undefined ? '' : `?next=${encodeURIComponent(options.next)}`
  const start = await client.get(`/login/oauth/${provider}${query}`, headers)
  expect(start.status).toBe(303)
  const authorization = new URL(start.location!)
  options.authorization?.(authorization)
  const back = await idpOf(provider).authorize(authorization.href, account, { deny: options.deny })
  expect(back.origin).toBe(PUBLIC_URL)
  options.callback?.(back)
  const callback = `${back.pathname}${back.search}`
  return { client, ip, authorization, callback, answer: await client.get(callback, headers) }
}

const identitiesOf = (userId: string) =>
  t.db.database.db.select().from(oauthIdentities).where(eq(oauthIdentities.userId, userId))
const userByEmail = async (email: string) =>
  (await t.db.database.db.select().from(users).where(eq(users.email, email)))[0] ?? null

describe('starting a login', () => {
  test('the login and sign-up pages offer each configured provider', async () => {
    const client = formClient(t)
    for (const path of ['/login', '/signup']) {
      const page = await client.get(path)
      for (const [id, label] of [
        ['google', 'Google'],
        ['microsoft', 'Microsoft'],
        ['linkedin', 'LinkedIn'],
        ['oidc', 'Local IdP'],
      ]) {
        expect(page.html).toContain(`href="/login/oauth/${id}"`)
        expect(page.html).toContain(`Continue with ${label}`)
      }
    }
    const withNext = await client.get('/login?next=%2Freports')
    expect(withNext.html).toContain('href="/login/oauth/oidc?next=%2Freports"')
    expect((await client.get('/login/oauth/github')).status).toBe(404)
  })

  test('the redirect carries state, an S256 PKCE challenge and a nonce; the flow cookie is sealed', async () => {
    const client = formClient(t)
    const start = await client.get('/login/oauth/oidc')
    expect(start.status).toBe(303)
    const url = new URL(start.location!)
    expect(url.origin).toBe(idp.issuer)
    const q = url.searchParams
    expect(q.get('response_type')).toBe('code')
    expect(q.get('client_id')).toBe('dw-oidc')
    expect(q.get('redirect_uri')).toBe(`${PUBLIC_URL}/login/oauth/oidc/callback`)
    expect(q.get('scope')).toBe('openid email profile')
    expect(q.get('code_challenge_method')).toBe('S256')
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(q.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(q.get('nonce')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const cookie = cookieAttributes(start.setCookies, 'dw_oauth') as Record<string, string>
    expect(cookie).toMatchObject({ path: '/', samesite: 'Lax', 'max-age': '600' })
    expect('httponly' in cookie).toBe(true)
    // Sealed: neither the state nor anything else of the flow can be read from it.
    const sealed = cookie.value!
    expect(sealed).toStartWith('v1.')
    expect(sealed).not.toContain(q.get('state')!)
    expect(Buffer.from(sealed.split('.')[2]!, 'base64url').toString('latin1')).not.toContain('state')
    // Another start gets other values.
    const again = new URL((await client.get('/login/oauth/oidc')).location!)
    expect(again.searchParams.get('state')).not.toBe(q.get('state'))
  })
})

describe('the callback', () => {
  test('a new person gets a user and an account, the session works, and the next login finds them', async () => {
    const email = unique('new')
    const account = person({ email, email_verified: true, name: 'New Person' })
    const first = await viaProvider('oidc', account, { next: '/reports' })
    expect(first.answer.status).toBe(303)
    expect(first.answer.location).toBe('/reports')
    expect(first.client.jar.has('dw_session')).toBe(true)
    // The flow cookie is spent.
    expect(first.client.jar.has('dw_oauth')).toBe(false)
    const domains = await first.client.get('/domains')
    expect(domains.status).toBe(200)
    expect(domains.html).toContain(email)
    const user = await userByEmail(email)
    expect(user!.passwordHash).toBeNull()
    const linked = await identitiesOf(user!.id)
    expect(linked).toHaveLength(1)
    expect(linked[0]).toMatchObject({ provider: `oidc:${idp.issuer}`, subject: account, email })
    expect(linked[0]!.lastLoginAt).not.toBeNull()
    expect(t.logs.some((line) => line.includes('"outcome":"created"'))).toBe(true)

    // Later, in another browser: the same user, no second one.
    const second = await viaProvider('oidc', account)
    expect(second.answer.status).toBe(303)
    expect(second.answer.location).toBe('/domains')
    expect((await second.client.get('/settings/account')).html).toContain(email)
    const count = await t.db.database.db.execute(
      sql`select count(*)::int as n from users where email = ${email}`,
    )
    expect((count as unknown as { n: number }[])[0]!.n).toBe(1)
  })

  test('next must be a local path', async () => {
    const account = person({ email: unique('next'), email_verified: true })
    const flow = await viaProvider('oidc', account, { next: '//evil.example/x' })
    expect(flow.answer.location).toBe('/domains')
  })

  test('an existing password user is linked when the provider verified the email; the password is turned off', async () => {
    const email = unique('linked')
    const owner = formClient(t)
    expect((await owner.signUp(email)).status).toBe(303)
    const userId = (await userByEmail(email))!.id
    const account = person({ email: email.toUpperCase(), email_verified: true })
    const flow = await viaProvider('oidc', account)
    expect(flow.answer.status).toBe(200)
    expect(flow.answer.html).toContain('password is turned off')
    expect((await flow.client.get('/domains')).status).toBe(200)
    expect((await identitiesOf(userId)).map((row) => row.subject)).toEqual([account])
    // Pre-account hijacking: the password set before the address was proven no longer works, and
    // the sessions started with it are over.
    expect((await owner.get('/domains')).status).toBe(303)
    expect((await formClient(t).logIn(email, PASSWORD)).status).toBe(400)
    // The next login through the provider goes straight in.
    expect((await viaProvider('oidc', account)).answer.status).toBe(303)
  })

  test('an existing password user is not linked through an unverified email', async () => {
    const email = unique('unverified-existing')
    expect((await formClient(t).signUp(email)).status).toBe(303)
    const userId = (await userByEmail(email))!.id
    const flow = await viaProvider('oidc', person({ email, email_verified: false }))
    expect(flow.answer.status).toBe(400)
    expect(flow.answer.html).toContain('has not verified the email address')
    expect(flow.client.jar.has('dw_session')).toBe(false)
    expect(await identitiesOf(userId)).toEqual([])
    expect((await formClient(t).logIn(email, PASSWORD)).status).toBe(303)
  })

  test('an unverified or missing email creates nobody', async () => {
    const email = unique('unverified-new')
    const unverified = await viaProvider('oidc', person({ email }))
    expect(unverified.answer.status).toBe(400)
    expect(unverified.answer.html).toContain('has not verified the email address')
    expect(await userByEmail(email)).toBeNull()
    const none = await viaProvider('oidc', person({ name: 'No Email' }))
    expect(none.answer.status).toBe(400)
    expect(none.answer.html).toContain('did not share an email address')
  })

  test('a tampered state, a tampered or missing flow cookie and a flow of another provider are refused', async () => {
    const email = unique('tamper')
    const account = person({ email, email_verified: true })
    const tampered = await viaProvider('oidc', account, {
      callback: (url) => url.searchParams.set('state', `${url.searchParams.get('state')!.slice(0, -2)}xx`),
    })
    expect(tampered.answer.status).toBe(400)
    expect(tampered.answer.html).toContain('could not be matched to this browser')
    expect(tampered.client.jar.has('dw_session')).toBe(false)
    expect(await userByEmail(email)).toBeNull()

    // The cookie altered by one character does not open.
    const client = formClient(t)
    const start = await client.get('/login/oauth/oidc')
    const sealed = client.jar.get('dw_oauth')!
    client.jar.set('dw_oauth', `${sealed.slice(0, -3)}${sealed.slice(-3) === 'AAA' ? 'BBB' : 'AAA'}`)
    const back = await idp.authorize(start.location!, account)
    expect((await client.get(`${back.pathname}${back.search}`)).status).toBe(400)

    // The same answer in a browser that did not start the flow (login CSRF).
    const victim = formClient(t)
    const started = await formClient(t).get('/login/oauth/oidc')
    const forged = await idp.authorize(started.location!, account)
    const answer = await victim.get(`${forged.pathname}${forged.search}`)
    expect(answer.status).toBe(400)
    expect(victim.jar.has('dw_session')).toBe(false)

    // A flow started for one provider does not complete at another's callback.
    const mixed = formClient(t)
    const google = await mixed.get('/login/oauth/google')
    const returned = await vendorIdp.authorize(google.location!, account)
    const wrong = await mixed.get(`/login/oauth/oidc/callback${returned.search}`)
    expect(wrong.status).toBe(400)
  })

  test('a replayed callback does not log in again', async () => {
    const account = person({ email: unique('replay'), email_verified: true })
    const original = formClient(t)
    const start = await original.get('/login/oauth/oidc')
    const flowCookie = original.jar.get('dw_oauth')!
    const back = await idp.authorize(start.location!, account)
    const path = `${back.pathname}${back.search}`
    expect((await original.get(path)).status).toBe(303)
    // Someone who has the callback URL and the flow cookie as they were before the callback (the
    // browser dropped it): the code is spent at the provider.
    const replay = formClient(t)
    replay.jar.set('dw_oauth', flowCookie)
    const replayed = await replay.get(path)
    expect(replayed.status).toBe(400)
    expect(replayed.html).toContain('could not be verified')
    expect(replay.jar.has('dw_session')).toBe(false)
    expect(t.logs.some((line) => line.includes('"reason":"exchange_failed"'))).toBe(true)
  })

  test('an ID token with another nonce is refused', async () => {
    const email = unique('nonce')
    const flow = await viaProvider('oidc', person({ email, email_verified: true }), {
      authorization: (url) => url.searchParams.set('nonce', 'a-nonce-this-browser-never-saw'),
    })
    expect(flow.answer.status).toBe(400)
    expect(flow.answer.html).toContain('could not be verified')
    expect(flow.client.jar.has('dw_session')).toBe(false)
    expect(t.logs.some((line) => line.includes('"reason":"nonce_mismatch"'))).toBe(true)
    expect(await userByEmail(email)).toBeNull()
  })

  test('denied consent is a clear message, not an error', async () => {
    const flow = await viaProvider('oidc', person({ email: unique('deny'), email_verified: true }), {
      deny: true,
    })
    expect(flow.answer.status).toBe(400)
    expect(flow.answer.html).toContain('You did not allow dmarcwatch to use your Local IdP account')
    expect(flow.answer.html).toContain('Continue with Local IdP')
  })
})

describe('provider profiles against the local provider', () => {
  test('Google: discovered from the overridden issuer, the email read from the ID token', async () => {
    const email = unique('google')
    const account = person({ email, email_verified: true })
    vendorIdp.requests.length = 0
    const flow = await viaProvider('google', account)
    expect(flow.authorization.origin).toBe(vendorIdp.issuer)
    expect(flow.authorization.searchParams.get('code_challenge_method')).toBe('S256')
    expect(flow.answer.status).toBe(303)
    expect(vendorIdp.requests).toContain('POST /token')
    expect(vendorIdp.requests).not.toContain('GET /me')
    const user = await userByEmail(email)
    expect((await identitiesOf(user!.id))[0]).toMatchObject({ provider: 'google', subject: account })
  })

  test('LinkedIn: no PKCE, client_secret_post, explicit endpoints', async () => {
    const email = unique('linkedin')
    vendorIdp.requests.length = 0
    const flow = await viaProvider('linkedin', person({ email, email_verified: true }))
    expect(flow.authorization.searchParams.has('code_challenge')).toBe(false)
    expect(vendorIdp.requests).not.toContain('GET /.well-known/openid-configuration')
    expect(flow.answer.status).toBe(303)
    const user = await userByEmail(email)
    expect((await identitiesOf(user!.id))[0]!.provider).toBe('linkedin')
  })

  test('Microsoft: the email counts only with xms_edov (or email_verified)', async () => {
    const plain = unique('entra-plain')
    const refused = await viaProvider('microsoft', person({ email: plain }))
    expect(refused.answer.status).toBe(400)
    expect(refused.answer.html).toContain('Microsoft has not verified the email address')
    expect(await userByEmail(plain)).toBeNull()
    const vouched = unique('entra-edov')
    const accepted = await viaProvider('microsoft', person({ email: vouched, xms_edov: true }))
    expect(accepted.answer.status).toBe(303)
    expect(await userByEmail(vouched)).not.toBeNull()
  })
})

describe('limits', () => {
  test('the callback counts against the client IP (public limit) and the account email (login limit)', async () => {
    const now = new Date()
    now.setUTCSeconds(2, 0)
    t.clock.now = now
    try {
      // Per email: three logins in the minute, password attempts included; the fourth is refused.
      const email = unique('limited')
      const account = person({ email, email_verified: true })
      expect((await viaProvider('oidc', account)).answer.status).toBe(303)
      expect((await formClient(t).logIn(email, 'not the password')).status).toBe(400)
      expect((await viaProvider('oidc', account)).answer.status).toBe(303)
      const refused = await viaProvider('oidc', account)
      expect(refused.answer.status).toBe(429)
      expect(refused.answer.headers.get('retry-after')).toBe('58')
      expect(refused.client.jar.has('dw_session')).toBe(false)

      // Per IP: 40 callbacks a minute from one address, whatever they carry.
      const ip = nextIp()
      const client = formClient(t)
      for (let i = 0; i < 40; i++) {
        const answer = await client.get('/login/oauth/oidc/callback?code=x&state=y', {
          'x-forwarded-for': ip,
        })
        expect(answer.status).toBe(400)
      }
      const blocked = await viaProvider('oidc', person({ email: unique('ip'), email_verified: true }), { ip })
      expect(blocked.answer.status).toBe(429)
      expect(blocked.answer.html).toContain('Too many attempts')
    } finally {
      t.clock.now = new Date()
    }
  })
})
