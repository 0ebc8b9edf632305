import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { csrfOf, type FormClient, formClient } from './client.ts'

// The dashboard's forms and addresses under the input rules (docs/api.md, "Input rules"): control
// characters and prototype-named keys are refused with the dashboard's 400 page, never a stack page
// or a 500; TAB, LF and CR stay allowed, since list fields are typed one per line.

let t: TestApp
let client: FormClient
const html = { accept: 'text/html' }

beforeAll(async () => {
  t = await startTestApp()
  client = formClient(t)
  await client.signUp(`rules-${Math.random().toString(36).slice(2, 8)}@example.com`)
}, 60_000)
afterAll(() => t.close())

const refusedPage = (answer: { status: number; html: string; headers: Headers }) => {
  expect(answer.status).toBe(400)
  expect(answer.headers.get('content-type')).toStartWith('text/html')
  expect(answer.html).toContain('Request refused')
  expect(answer.html).not.toMatch(/\.ts:\d+|node_modules|\bat \S+ \(/)
}

test('NUL in a form field is the 400 page and nothing is created', async () => {
  const csrf = csrfOf((await client.get('/organizations')).html)
  const answer = await client.post('/organizations', { _csrf: csrf, name: 'a\u0000b' }, { headers: html })
  refusedPage(answer)
  expect(answer.html).toContain('The name field must not contain control characters.')
  expect((await client.get('/organizations')).html).not.toContain('a\u0000b')
})

test('a prototype-named form key or query key is the 400 page', async () => {
  const csrf = csrfOf((await client.get('/organizations')).html)
  for (const key of ['__proto__', 'constructor']) {
    // fromEntries: an own `__proto__` key, where an object literal would set the prototype.
    const fields = Object.fromEntries([
      ['_csrf', csrf],
      ['name', 'x'],
      [key, 'y'],
    ])
    refusedPage(await client.post('/organizations', fields, { headers: html }))
  }
  refusedPage(await client.get('/domains?constructor=1', html))
  refusedPage(await client.get('/domains?q=%00', html))
})

// Found by a hostile-input sweep: URLSearchParams reads bytes that are not UTF-8 as U+FFFD, and
// the name was stored changed (plugins/input-rules.ts, findUndecodable).
test('a form field or query value that is not UTF-8 is the 400 page and nothing is created', async () => {
  const csrf = csrfOf((await client.get('/organizations')).html)
  for (const name of ['X%ffY', 'Q%ed%a0%80Q']) {
    const answer = await client.post('/organizations', `_csrf=${encodeURIComponent(csrf)}&name=${name}`, {
      headers: html,
    })
    refusedPage(answer)
    expect(answer.html).toContain('The name field must be well-formed UTF-8 text.')
  }
  expect((await client.get('/organizations')).html).not.toContain('\uFFFD')
  refusedPage(await client.get('/domains?q=%ff', html))
})

test('line breaks in a multi-line field are kept', async () => {
  // The embed key's allowed origins: a textarea, one origin a line.
  const csrf = csrfOf((await client.get('/settings/api')).html)
  const answer = await client.post('/settings/api/embed-keys', {
    _csrf: csrf,
    embed_name: 'Lines',
    allowed_origins: 'https://www.example.com\r\nhttps://example.com',
  })
  expect(answer.status).toBe(303)
  const page = await client.get(answer.location!)
  expect(page.html).toContain('https://www.example.com, https://example.com')
})
