import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startWorkers } from '../../src/worker.ts'
import { attachment, multipart } from '../infrastructure/mail/mime-builder.ts'
import { type DnsTestServer, startDnsServer } from '../support/dns-server.ts'
import { ingestMessage, settledMessage } from '../support/report-world.ts'
import { reportXml } from '../support/source-reports.ts'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { type FormClient, formClient } from './client.ts'

// A domain's page while reports wait for its verification: how many, why and how to verify; the
// Verify button finding the DMARC record's rua and the waiting reports processed after it.

let dns: DnsTestServer
let t: TestApp
let browser: FormClient
let token: string
let address: string

const EMAIL = 'waiting@example.org'

function reportMail(domain: string, id: string): string {
  const xml = reportXml(domain, 'receiver.example', id, Math.floor(Date.now() / 1000), [
    { ip: '192.0.2.9', count: 1 },
  ])
  return multipart([attachment('application/xml', `${id}.xml`, new TextEncoder().encode(xml))])
}

beforeAll(async () => {
  dns = await startDnsServer({ '_dmarc.held.example': [{ type: 'TXT', data: 'v=DMARC1; p=none' }] })
  t = await startTestApp(
    { DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '300', INGEST_DOMAIN: 'in.dmarcwatch.test' },
    { queue: true },
  )
  await startWorkers(t.runtime.boss!, t.runtime)
  browser = formClient(t)
  await browser.signUp(EMAIL)
  expect((await browser.submit('/domains', { domain_name: 'held.example' })).status).toBe(303)
  token = await t.tokenFor(EMAIL)
  address = (await t.request('GET', '/api/v1/ingest/address', { token })).body.data.address
}, 60_000)
afterAll(async () => {
  await t.close()
  await dns.stop()
})

test('the page counts the reports waiting for verification, says why, and they go through once verified', async () => {
  const before = await browser.get('/domains/held.example')
  expect(before.html).not.toContain('waiting for verification')
  expect(before.html).toContain(`mailto:${address}`)

  const held = [
    await ingestMessage(t, token, reportMail('held.example', 'wait-1')),
    await ingestMessage(t, token, reportMail('held.example', 'wait-2')),
  ]
  for (const message of held) expect(message.code).toBe('domain_not_verified')

  const waiting = await browser.get('/domains/held.example')
  expect(waiting.html).toContain('2 report emails are waiting for verification')
  expect(waiting.html).toContain('Reports only count for domains whose ownership is proven')
  expect(waiting.html).toContain('href="#ownership"')
  expect(waiting.html).toContain('_dmarcwatch.held.example')

  // The Verify button: the record does not name the address yet, then it does.
  const refused = await browser.submit('/domains/held.example', {}, '/domains/held.example/verify')
  expect(refused.status).toBe(200)
  expect(refused.html).toContain(`does not name ${address} in rua or ruf`)

  dns.set('_dmarc.held.example', 'TXT', [{ data: `v=DMARC1; p=none; rua=mailto:${address}` }])
  const verified = await browser.submit('/domains/held.example', {}, '/domains/held.example/verify')
  expect(verified.html).toContain('Ownership verified by the DMARC record')
  expect(verified.html).toContain('2 report emails that were waiting for it are queued again')

  for (const message of held) expect((await settledMessage(t, message.id)).status).toBe('processed')
  const after = await browser.get('/domains/held.example')
  expect(after.html).not.toContain('waiting for verification')
  expect(after.html).toContain('by your DMARC record, whose rua names your report address')
}, 40_000)
