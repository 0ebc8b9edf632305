import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sendWebhook } from '../../../infrastructure/http/webhook-sender.ts'
import { a, memoryDns } from '../../support/memory-dns.ts'
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.ts'

// The production path: an https URL naming a host. The host resolves (here through a stub) to the
// receiver on loopback, with a certificate made for the test; the sender connects to the vetted
// address while Host and the TLS server name stay the URL's host.

let dir: string
let cert: string
let receiver: WebhookReceiver

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dw-webhook-tls-'))
  const [keyFile, certFile] = [join(dir, 'key.pem'), join(dir, 'cert.pem')]
  const made = Bun.spawnSync([
    ...['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2'],
    ...['-subj', '/CN=hooks.test', '-addext', 'subjectAltName=DNS:hooks.test'],
    ...['-keyout', keyFile, '-out', certFile],
  ])
  expect(made.exitCode).toBe(0)
  cert = await Bun.file(certFile).text()
  receiver = startWebhookReceiver({ tls: { cert, key: await Bun.file(keyFile).text() } })
})
afterAll(async () => {
  await receiver.stop()
  rmSync(dir, { recursive: true, force: true })
})

const event = {
  id: '0b7e3a52-64f1-4c1e-9d55-2f0f6a1b9c3d',
  type: 'spf.activated',
  data: { domain: 'example.com' },
}

test('arrives over https at a hostname, pinned to the vetted address, and verifies', async () => {
  const dns = memoryDns({ 'hooks.test': [a('127.0.0.1')] })
  const result = await sendWebhook(
    { dns, allowPrivate: true, now: () => new Date(), tls: { ca: cert } },
    { url: `https://hooks.test:${receiver.port}/hooks`, secret: receiver.secret, event },
  )
  expect(result.outcome).toEqual({ kind: 'response', status: 200 })
  expect(dns.queries).toEqual(['A hooks.test', 'AAAA hooks.test'])
  expect(receiver.arrivals[0]!.headers.host).toBe(`hooks.test:${receiver.port}`)
  expect(receiver.arrivals[0]!.verified).toBe(true)
})

test('a certificate the sender does not trust is a connection error (retried), not a delivery', async () => {
  const dns = memoryDns({ 'hooks.test': [a('127.0.0.1')] })
  const result = await sendWebhook(
    { dns, allowPrivate: true, now: () => new Date() },
    { url: `https://hooks.test:${receiver.port}/hooks`, secret: receiver.secret, event },
  )
  expect(result.outcome.kind).toBe('connection_error')
})

test("a connection error's reason names no URL: the path of a chat URL is its secret", async () => {
  // The certificate is for hooks.test, the URL names other.test: Bun's error names the URL it
  // fetched, the vetted address with the whole path.
  const dns = memoryDns({ 'other.test': [a('127.0.0.1')] })
  const result = await sendWebhook(
    { dns, allowPrivate: true, now: () => new Date(), tls: { ca: cert } },
    { url: `https://other.test:${receiver.port}/services/T0/B0/s3cr3t`, secret: receiver.secret, event },
  )
  expect(result.outcome.kind).toBe('connection_error')
  const message = result.outcome.kind === 'connection_error' ? result.outcome.message : ''
  expect(message).toStartWith(`https://other.test:${receiver.port}: `)
  expect(message).toContain('ERR_TLS_CERT_ALTNAME_INVALID')
  expect(message).not.toContain('s3cr3t')
  expect(message).not.toContain('127.0.0.1')
  expect(message).not.toContain('verbose')
})
