import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { csrfOf, type FormClient, formClient } from './client.ts'

// The dashboard's forms under docs/api.md's "Input rules": a body whose raw bytes are not UTF-8
// (not percent-encoded ones, tests/dashboard/input-rules.test.ts) is the 400 page and nothing is
// stored, where it used to be stored with U+FFFD in place of the bytes.

let t: TestApp
let client: FormClient
const NOT_UTF8 = 'The request body must be well-formed UTF-8 text.'

beforeAll(async () => {
  t = await startTestApp({}, { queue: true })
  client = formClient(t)
  await client.signUp(`utf8-${Math.random().toString(36).slice(2, 8)}@example.com`)
}, 60_000)
afterAll(() => t.close())

/** A POST with a body of raw bytes (FormClient.post sends a string, always UTF-8). */
async function postBytes(path: string, body: Uint8Array<ArrayBuffer>, headers: Record<string, string>) {
  const all = new Headers({ origin: new URL(t.config.publicUrl).origin, accept: 'text/html', ...headers })
  all.set('cookie', [...client.jar].map(([k, v]) => `${k}=${v}`).join('; '))
  const response = await t.app.handle(
    new Request(`${t.config.publicUrl}${path}`, { method: 'POST', headers: all, body }),
  )
  return { status: response.status, type: response.headers.get('content-type'), html: await response.text() }
}

const form = { 'content-type': 'application/x-www-form-urlencoded' }

test('a form body with raw bytes that are not UTF-8 is the 400 page and nothing is created', async () => {
  const csrf = csrfOf((await client.get('/organizations')).html)
  for (const bad of [[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80]]) {
    const body = Buffer.concat([
      Buffer.from(`_csrf=${encodeURIComponent(csrf)}&name=X`),
      Buffer.from(bad),
      Buffer.from('Y'),
    ])
    const answer = await postBytes('/organizations', body, form)
    expect(answer.status).toBe(400)
    expect(answer.type).toStartWith('text/html')
    expect(answer.html).toContain('Request refused')
    expect(answer.html).toContain(NOT_UTF8)
  }
  expect((await client.get('/organizations')).html).not.toContain('\uFFFD')
})

test('the forms used before sign-in refuse such bytes too', async () => {
  const visitor = formClient(t)
  const pre = csrfOf((await visitor.get('/login')).html)
  const body = Buffer.concat([
    Buffer.from(`_csrf=${pre}&email=a`),
    Buffer.from([0xff]),
    Buffer.from('@example.com'),
  ])
  const answer = await t.app.handle(
    new Request(`${t.config.publicUrl}/login`, {
      method: 'POST',
      headers: {
        ...form,
        accept: 'text/html',
        origin: new URL(t.config.publicUrl).origin,
        cookie: [...visitor.jar].map(([k, v]) => `${k}=${v}`).join('; '),
      },
      body,
    }),
  )
  expect(answer.status).toBe(400)
  expect(await answer.text()).toContain(NOT_UTF8)
})

test('raw UTF-8 beyond ASCII in a form body is kept as sent', async () => {
  const csrf = csrfOf((await client.get('/organizations')).html)
  const answer = await postBytes(
    '/organizations',
    new TextEncoder().encode(`_csrf=${encodeURIComponent(csrf)}&name=Zürich ☕`),
    form,
  )
  expect(answer.status).toBe(303)
  expect((await client.get('/organizations')).html).toContain('Zürich ☕')
})

test('a multipart text field that is not UTF-8 (the upload form) is the 400 page', async () => {
  const csrf = csrfOf((await client.get('/reports/upload')).html)
  const boundary = 'dwUtf8Boundary'
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${csrf}\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\nX`),
    Buffer.from([0xff]),
    Buffer.from(
      `\r\n--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="a.xml"\r\n\r\n<feedback/>\r\n--${boundary}--\r\n`,
    ),
  ])
  const answer = await postBytes('/reports/upload', body, {
    'content-type': `multipart/form-data; boundary=${boundary}`,
  })
  expect(answer.status).toBe(400)
  expect(answer.html).toContain(NOT_UTF8)
})
