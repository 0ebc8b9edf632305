import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { aggregateXml } from '../../bench/report-generator.ts'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { listenOnLoopback, startTestApp, type TestApp } from '../support/test-app.ts'
import { csrfOf, type FormClient, formClient } from './client.ts'

// /reports/upload streams its body (docs/ingestion.md, "Memory"): the body parser reads the form's
// fields before the first file (the CSRF token), the route spools the body and each file; a file is
// never held whole. Over a real server, so the body arrives in the network's chunks.

let t: TestApp
let client: FormClient
let base: string
let stop: () => void
let token: string

beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_LOGIN_PER_MINUTE: '1000' }, { queue: true })
  client = formClient(t)
  await client.signUp(`stream-${Math.random().toString(36).slice(2, 8)}@example.com`)
  await client.submit('/domains', { domain_name: 'example.com', automation_level: 'manual' })
  await t.db.database.db.execute(sql`update domains set verified_at = now() where name = 'example.com'`)
  token = csrfOf((await client.get('/reports/upload')).html)
  ;({ base, stop } = listenOnLoopback(t.app))
}, 60_000)
afterAll(async () => {
  stop?.()
  await t?.close()
})

const cookie = () => [...client.jar].map(([k, v]) => `${k}=${v}`).join('; ')

async function post(body: BodyInit, headers: Record<string, string> = {}, onAnswer = () => {}) {
  const response = await fetch(`${base}/reports/upload`, {
    method: 'POST',
    body,
    headers: {
      origin: new URL(t.config.publicUrl).origin,
      cookie: cookie(),
      accept: 'application/json',
      ...headers,
    },
    duplex: 'half',
  } as RequestInit)
  onAnswer()
  const text = await response.text()
  return { status: response.status, text, json: () => JSON.parse(text) }
}

const messages = async () =>
  rowsOf<{ size: number; sha256: string }>(
    await t.db.database.db.execute(sql`select size, sha256 from ingest_messages order by received_at`),
  )

const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher('sha256').update(bytes).digest('hex')

describe('a streamed upload', () => {
  test('a file larger than a spool keeps in memory is stored byte for byte, among other parts', async () => {
    const xml = new TextEncoder().encode(
      aggregateXml({ domain: 'example.com', reportId: 'stream-1', records: 8000, seed: 3 }),
    )
    expect(xml.byteLength).toBeGreaterThan(2 * 1024 * 1024)
    const form = new FormData()
    form.append('_csrf', token)
    form.append('note', 'a field the route does not use')
    form.append('files', new File(['not a report'], 'notes.txt'))
    form.append('files', new File([xml], 'big.xml'))
    const answer = await post(form)
    expect(answer.status).toBe(200)
    const items = answer.json().data.items
    expect(items.map((item: { label: string; status: string }) => [item.label, item.status])).toEqual([
      ['notes.txt', 'skipped'],
      ['big.xml', 'stored'],
    ])
    expect(items[1].detail).toContain('8000 records')
    expect((await messages()).at(-1)).toEqual({ size: xml.byteLength, sha256: sha256(xml) })
  }, 60_000)

  test('over the limit without Content-Length: 413 once the limit is passed, nothing stored', async () => {
    const before = (await messages()).length
    const limit = t.config.ingestMaxMessageBytes
    const boundary = 'dwStreamBoundary'
    const head = new TextEncoder().encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${token}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="huge.xml"\r\n\r\n<feedback>`,
    )
    let sent = 0
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const chunk = sent === 0 ? head : new Uint8Array(1024 * 1024).fill(0x20)
        sent += chunk.byteLength
        if (sent > 4 * limit) controller.close()
        else controller.enqueue(chunk)
      },
    })
    // What the client had handed over when the answer came. Between the service's reading and
    // this stream lie both ends' socket buffers and Bun's own queues, which under load held up to
    // 23 MB past the limit in one CI run; the stream's end is far beyond that (4 × limit).
    let sentAtAnswer = 0
    const answer = await post(body, { 'content-type': `multipart/form-data; boundary=${boundary}` }, () => {
      sentAtAnswer = sent
    })
    expect(answer.status).toBe(413)
    expect(answer.json()).toMatchObject({ error: 'payload_too_large', limit })
    // Reading stopped near the limit, not at the end of the stream.
    expect(sentAtAnswer).toBeGreaterThan(limit)
    expect(sentAtAnswer).toBeLessThan(1.5 * limit)
    expect((await messages()).length).toBe(before)
  }, 60_000)

  test('the CSRF token must come before the files, or in the X-CSRF-Token header', async () => {
    const filesFirst = () => {
      const form = new FormData()
      form.append('files', new File(['<feedback/>'], 'a.xml'))
      form.append('_csrf', token)
      return form
    }
    expect((await post(filesFirst())).status).toBe(403)
    const viaHeader = await post(filesFirst(), { 'x-csrf-token': token })
    expect(viaHeader.status).toBe(200)
    expect(viaHeader.json().data.items).toHaveLength(1)
  })

  test('a body cut off inside a file is a 400 on body; no file at all is the form error', async () => {
    const boundary = 'dwCutBoundary'
    const cut = `--${boundary}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${token}\r\n--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="a.xml"\r\n\r\n<feedback>never closed`
    const answer = await post(cut, { 'content-type': `multipart/form-data; boundary=${boundary}` })
    expect(answer.status).toBe(400)
    const message = 'The upload is not a complete multipart/form-data body.'
    expect(answer.json()).toEqual({ message, errors: { body: [message] } })
    const empty = new FormData()
    empty.append('_csrf', token)
    const none = await post(empty)
    expect(none.status).toBe(400)
    expect(none.json()).toEqual({ error: 'validation_failed', message: 'Choose at least one file.' })
  })

  test('a form body that is not multipart is not read beyond the default body limit', async () => {
    const pad = 'x'.repeat(t.config.maxJsonBodyBytes + 1)
    const answer = await post(`_csrf=${encodeURIComponent(token)}&pad=${pad}`, {
      'content-type': 'application/x-www-form-urlencoded',
    })
    expect(answer.status).toBe(413)
    expect(answer.json()).toMatchObject({ error: 'payload_too_large', limit: t.config.maxJsonBodyBytes })
  })
})
