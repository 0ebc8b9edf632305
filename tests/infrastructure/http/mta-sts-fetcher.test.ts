import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Server } from 'bun'
import { isPublicAddress } from '../../../infrastructure/http/address-guard.ts'
import { createMtaStsFetcher } from '../../../infrastructure/http/mta-sts-fetcher.ts'
import { type DnsTestServer, startDnsServer } from '../../support/dns-server.ts'

// A real HTTPS server on loopback with a certificate made for the test, and a real DNS server.

let dir: string
let ca: string
let https: Server<unknown>
let dns: DnsTestServer
const answers = new Map<string, Response | (() => Response)>()

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dw-tls-'))
  const openssl = Bun.spawnSync([
    'openssl',
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-keyout',
    join(dir, 'key.pem'),
    '-out',
    join(dir, 'cert.pem'),
    '-subj',
    '/CN=mta-sts.ok.example',
    '-addext',
    'subjectAltName=DNS:mta-sts.ok.example,DNS:mta-sts.redirect.example,DNS:mta-sts.html.example,DNS:mta-sts.big.example',
  ])
  expect(openssl.exitCode).toBe(0)
  ca = await Bun.file(join(dir, 'cert.pem')).text()
  https = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    tls: { cert: Bun.file(join(dir, 'cert.pem')), key: Bun.file(join(dir, 'key.pem')) },
    fetch(request) {
      const answer = answers.get(request.headers.get('host')!.split(':')[0]!)
      return typeof answer === 'function' ? answer() : (answer ?? new Response('no', { status: 404 }))
    },
  })
  const local = [{ type: 'A' as const, data: '127.0.0.1' }]
  dns = await startDnsServer({
    'mta-sts.ok.example': local,
    'mta-sts.redirect.example': local,
    'mta-sts.html.example': local,
    'mta-sts.big.example': local,
    'mta-sts.public.example': [
      { type: 'A', data: '127.0.0.1' },
      { type: 'A', data: '93.184.216.34' },
    ],
  })
  const policy = 'version: STSv1\nmode: enforce\nmx: mx.ok.example\nmax_age: 86400\n'
  answers.set(
    'mta-sts.ok.example',
    () => new Response(policy, { headers: { 'content-type': 'text/plain; charset=utf-8' } }),
  )
  answers.set('mta-sts.redirect.example', () => Response.redirect('https://elsewhere.example/', 302))
  answers.set(
    'mta-sts.html.example',
    () => new Response('<html>', { headers: { 'content-type': 'text/html' } }),
  )
  answers.set(
    'mta-sts.big.example',
    () => new Response('x'.repeat(70_000), { headers: { 'content-type': 'text/plain' } }),
  )
})
afterAll(async () => {
  https.stop(true)
  await dns.stop()
  rmSync(dir, { recursive: true, force: true })
})

const resolver = async () => {
  const { createDnsPacketResolver } = await import('../../../infrastructure/dns/dns-packet-resolver.ts')
  return createDnsPacketResolver({ servers: [{ host: '127.0.0.1', port: dns.port }], timeoutMs: 500 })
}

test('fetches the policy over HTTPS from the vetted address, checking the certificate for the host', async () => {
  const fetchPolicy = createMtaStsFetcher({
    dns: await resolver(),
    allowPrivate: true,
    tls: { ca },
    port: https.port,
  })
  const result = await fetchPolicy('ok.example')
  expect(result).toEqual({ status: 'ok', text: expect.stringContaining('mode: enforce') })
})

test('redirects are not followed, other media types and oversize policies are refused (RFC 8461 §3.3)', async () => {
  const fetchPolicy = createMtaStsFetcher({
    dns: await resolver(),
    allowPrivate: true,
    tls: { ca },
    port: https.port,
  })
  expect(await fetchPolicy('redirect.example')).toEqual({
    status: 'unavailable',
    reason: expect.stringContaining('HTTP 302'),
  })
  expect(await fetchPolicy('html.example')).toEqual({
    status: 'unavailable',
    reason: expect.stringContaining('text/html'),
  })
  expect(await fetchPolicy('big.example')).toEqual({
    status: 'unavailable',
    reason: expect.stringContaining('64 KB'),
  })
})

test('an untrusted certificate is refused', async () => {
  const fetchPolicy = createMtaStsFetcher({ dns: await resolver(), allowPrivate: true, port: https.port })
  const result = await fetchPolicy('ok.example')
  expect(result.status).toBe('unavailable')
})

test('private targets are refused unless allowed, also when only one of several addresses is private', async () => {
  const fetchPolicy = createMtaStsFetcher({ dns: await resolver(), tls: { ca }, port: https.port })
  expect(await fetchPolicy('ok.example')).toEqual({
    status: 'unavailable',
    reason: expect.stringContaining('non-public'),
  })
  expect(await fetchPolicy('public.example')).toEqual({
    status: 'unavailable',
    reason: expect.stringContaining('127.0.0.1'),
  })
  expect(await fetchPolicy('missing.example')).toEqual({
    status: 'unavailable',
    reason: expect.stringContaining('no address'),
  })
})

test.each([
  ['127.0.0.1', false],
  ['10.1.2.3', false],
  ['169.254.169.254', false],
  ['100.64.0.1', false],
  ['192.168.1.1', false],
  ['::1', false],
  ['fe80::1', false],
  ['fd00::1', false],
  ['::ffff:127.0.0.1', false],
  ['::ffff:93.184.216.34', true],
  ['93.184.216.34', true],
  ['2606:2800:220:1::1', true],
  ['not-an-ip', false],
])('isPublicAddress(%p) is %p', (address, expected) => {
  expect(isPublicAddress(address)).toBe(expected)
})
