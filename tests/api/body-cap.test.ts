import { afterAll, beforeAll, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { listenOnLoopback, startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// Bodies past every limit, over a real loopback server listening as the service does
// (src/compose.ts LISTEN_OPTIONS): Bun has no cap of its own, so each is refused by the route's
// limit in the API's format (JSON, with its request id), and what the client still sends is read
// and dropped. Bun's own cap answered a bare 413 (no JSON, no request id) past the limit + 1 MiB.

const LIMIT = 1024 * 1024
const MiB = 1024 * 1024
let t: TestApp
let owner: TestAccount
let base: string
let port: number
let stop: () => void

beforeAll(async () => {
  t = await startTestApp({ INGEST_MAX_MESSAGE_BYTES: String(LIMIT), RATE_LIMIT_API_PER_MINUTE: '10000' })
  owner = await t.account()
  ;({ base, stop } = listenOnLoopback(t.app))
  port = Number(new URL(base).port)
})
afterAll(async () => {
  stop?.()
  await t?.close()
})

/**
 * Declares `declared` bytes and sends the head; the answer is read as soon as it comes. Then it
 * writes `thenWrite` bytes of the body as fast as the server takes them, and reports how much of
 * the answer had come before the first byte of the body.
 */
function rawSend(request: string, declared: number, thenWrite: number, headers: Record<string, string> = {}) {
  return new Promise<{ answer: string; written: number; rssGrowth: number }>((resolve) => {
    const socket = connect(port, '127.0.0.1')
    let answer = ''
    let written = 0
    const rssBefore = process.memoryUsage().rss
    let rssPeak = rssBefore
    const chunk = Buffer.alloc(256 * 1024)
    const head = Object.entries({ host: 'x', 'content-length': String(declared), ...headers })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('')
    socket.write(`${request} HTTP/1.1\r\n${head}\r\n`)
    socket.on('data', (data) => {
      answer += data.toString('latin1')
      if (!answer.includes('\r\n\r\n')) return
      // The answer is in, before any of the body was sent: now the body, as a careless client would.
      const pump = setInterval(() => {
        rssPeak = Math.max(rssPeak, process.memoryUsage().rss)
        while (!socket.destroyed && socket.writableLength < 4 * chunk.length && written < thenWrite) {
          socket.write(chunk)
          written += chunk.length
        }
        if (written >= thenWrite && socket.writableLength === 0) {
          clearInterval(pump)
          socket.destroy()
          resolve({ answer, written, rssGrowth: rssPeak - rssBefore })
        }
      }, 2)
    })
    socket.on('error', () => {})
  })
}

const jsonOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))

test('a declared length far past the message limit: the JSON 413 at once, and the body dropped as it comes', async () => {
  const sent = await rawSend('POST /api/v1/ingest/reports', 10 * 1024 ** 3, 512 * MiB, {
    authorization: `Bearer ${owner.token}`,
    'content-type': 'application/octet-stream',
  })
  expect(sent.answer).toStartWith('HTTP/1.1 413 ')
  expect(sent.answer.toLowerCase()).toContain('x-request-id: ')
  expect(jsonOf(sent.answer)).toMatchObject({ error: 'payload_too_large', limit: LIMIT })
  // 512 MB went to the server after the answer; none of it was kept.
  expect(sent.written).toBe(512 * MiB)
  expect(sent.rssGrowth).toBeLessThan(64 * MiB)
}, 60_000)

test('a chunked body is refused by the route, in JSON, as soon as it passes its limit', async () => {
  let pulled = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled > 256 * MiB) return controller.close()
      pulled += MiB
      controller.enqueue(new Uint8Array(MiB).fill(0x20))
    },
  })
  const response = await fetch(`${base}/api/v1/ingest/reports`, {
    method: 'POST',
    body,
    headers: { authorization: `Bearer ${owner.token}` },
    duplex: 'half',
  } as RequestInit)
  const pulledAtAnswer = pulled
  expect(response.status).toBe(413)
  expect(response.headers.get('x-request-id')).toBeTruthy()
  expect(await response.json()).toMatchObject({ error: 'payload_too_large', limit: LIMIT })
  expect(pulledAtAnswer).toBeLessThan(64 * MiB)
})

test('any route, GET too: a declared length past its limit is the JSON 413', async () => {
  const sent = await rawSend('GET /api/v1/domains', 10 * 1024 ** 3, 16 * MiB, {
    authorization: `Bearer ${owner.token}`,
  })
  expect(sent.answer).toStartWith('HTTP/1.1 413 ')
  expect(jsonOf(sent.answer)).toMatchObject({ error: 'payload_too_large' })
})
