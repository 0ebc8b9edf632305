import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import { splitTxtStrings } from '../../domain/spf/chain.ts'
import { checkHost } from '../../domain/spf/check-host.ts'
import { isSubdomainOrSelf } from '../../domain/spf/lookups.ts'
import {
  type AuthoritativeResponder,
  startAuthoritativeResponder,
} from '../../infrastructure/dns/authoritative-responder.ts'
import { createDnsPacketResolver } from '../../infrastructure/dns/dns-packet-resolver.ts'
import { pgSpfStore } from '../../infrastructure/repositories/pg-spf-store.ts'
import { DOMAIN, type SourceWorld, startSourceWorld } from '../support/source-reports.ts'

// Issue #5's check, end to end with real parts: real aggregate reports through the HTTP intake and
// the worker; the sources and their recommendations from the API; a decision taken on them (a
// partner marked legitimate and added to SPF); management activated; the hosted record read over
// real DNS from the built-in responder; and check_host() run for every source through the record
// the API says to publish. Every legitimate source passes; the spoofer does not.

let w: SourceWorld
let responder: AuthoritativeResponder
let world: DnsResolver

beforeAll(async () => {
  w = await startSourceWorld()
  const zone = w.t.config.spf.zone
  const store = pgSpfStore(w.t.db.database.db, { zone })
  responder = await startAuthoritativeResponder({
    host: '127.0.0.1',
    port: 0,
    zone,
    nameservers: w.t.config.spf.nameservers,
    hostmaster: w.t.config.spf.hostmaster,
    lookup: (name) => store.hostedTxt(name),
  })
  const hosted = createDnsPacketResolver({ servers: [{ host: '127.0.0.1', port: responder.port }] })
  const others = createDnsPacketResolver({ servers: [{ host: '127.0.0.1', port: w.dns.port }] })
  world = {
    resolve: (name, type) =>
      (isSubdomainOrSelf(name.toLowerCase(), zone) ? hosted : others).resolve(name, type),
  }
}, 60_000)
afterAll(async () => {
  await responder?.close()
  await w?.close()
})

const api = (method: string, path: string, body?: unknown) =>
  w.t.request(method, `/api/v1/domains/${DOMAIN}${path}`, { token: w.owner.token, body })

test('reports → sources → a decision → managed SPF served over DNS → every legitimate source passes', async () => {
  // 1. Who sends as the domain, from the reports.
  const sources = await api('GET', '/sources')
  expect(sources.status).toBe(200)
  const byIp = new Map(sources.body.data.map((s: { ip: string }) => [s.ip, s]))
  expect(byIp.get('149.72.10.20')).toMatchObject({ service: { id: 'sendgrid' }, status: 'legitimate' })
  expect(byIp.get('203.0.113.9')).toMatchObject({ service: null, status: 'suspicious' })
  const partner = byIp.get('198.51.100.7') as { status: string; ptr: string }
  expect(partner).toMatchObject({ ptr: 'mx.partner.example' })
  expect(partner.status).not.toBe('legitimate')

  // 2. The machine's advice covers the spoofer.
  const advice = await api('GET', '/sources/intelligence')
  expect(advice.status).toBe(200)
  expect(advice.body.data.map((r: { type: string }) => r.type)).toContain('block_spoofing')

  // 3. The owner knows the partner: legitimate, and authorised in SPF.
  const marked = await api('PATCH', '/sources/198.51.100.7', { status: 'legitimate' })
  expect(marked.status).toBe(200)
  const activated = await api('POST', '/spf/activate')
  expect(activated.status).toBe(200)
  const added = await api('POST', '/sources/198.51.100.7/add-to-spf')
  expect(added.status).toBe(200)
  const spf = await api('GET', '/spf')
  const management = spf.body.data.management
  expect(management.version).toBe(2)

  // 4. The user publishes what the API says; the hosted record comes from the responder.
  w.dns.set(DOMAIN, 'TXT', [{ data: splitTxtStrings(management.publish.record) }])
  const served = await world.resolve(management.hosted_name, 'TXT')
  expect(served.status).toBe('ok')

  // 5. check_host() for every source through the published record.
  const verdict = async (ip: string) =>
    (
      await checkHost(
        { dns: world },
        { ip, domain: DOMAIN, sender: `postmaster@${DOMAIN}`, helo: 'mail.test', now: new Date() },
      )
    ).result
  for (const ip of ['74.125.0.1', '149.72.10.20', '198.51.100.7']) expect(await verdict(ip)).toBe('pass')
  expect(['fail', 'softfail']).toContain(await verdict('203.0.113.9'))
}, 60_000)
