import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import { checkHost } from '../../domain/spf/check-host.ts'
import { isSubdomainOrSelf } from '../../domain/spf/lookups.ts'
import {
  type AuthoritativeResponder,
  startAuthoritativeResponder,
} from '../../infrastructure/dns/authoritative-responder.ts'
import { createDnsPacketResolver } from '../../infrastructure/dns/dns-packet-resolver.ts'
import { pgSpfStore } from '../../infrastructure/repositories/pg-spf-store.ts'
import { SPF_ZONE, type SpfTestApp, spf, startSpfApp } from '../support/spf-app.ts'
import type { TestAccount } from '../support/test-app.ts'

// End to end: records activated through the API are served by the built-in responder straight from
// the store, read back over real DNS with the project's resolver, and evaluated with check_host()
// through the record a user publishes: every source passes, anything else fails.

let s: SpfTestApp
let owner: TestAccount
let responder: AuthoritativeResponder
/** The hosted zone from the responder, everything else from the test DNS server. */
let world: DnsResolver

beforeAll(async () => {
  s = await startSpfApp()
  owner = await s.t.account()
  const store = pgSpfStore(s.t.db.database.db, { zone: SPF_ZONE })
  responder = await startAuthoritativeResponder({
    host: '127.0.0.1',
    port: 0,
    zone: SPF_ZONE,
    nameservers: ['ns1.dmarcwatch.test'],
    hostmaster: 'hostmaster@dmarcwatch.test',
    lookup: (name) => store.hostedTxt(name),
  })
  const hosted = createDnsPacketResolver({ servers: [{ host: '127.0.0.1', port: responder.port }] })
  const others = createDnsPacketResolver({ servers: [{ host: '127.0.0.1', port: s.dns.port }] })
  world = {
    resolve: (name, type) =>
      (isSubdomainOrSelf(name.toLowerCase(), SPF_ZONE) ? hosted : others).resolve(name, type),
  }
}, 60_000)
afterAll(async () => {
  await responder.close()
  await s.close()
})

async function activate(name: string, body: unknown) {
  await s.addDomain(owner, name)
  const res = await s.t.request('POST', `/api/v1/domains/${name}/spf/activate`, { token: owner.token, body })
  expect(res.status).toBe(200)
  return res.body.data.management
}

/** check_host() for `ip` through `v=spf1 include:<hosted> -all` published at `user.<name>`. */
async function check(name: string, hostedName: string, ip: string) {
  const domain = `user.${name}`
  s.dns.set(domain, 'TXT', [{ data: spf(`v=spf1 include:${hostedName} -all`).data as string[] }])
  const result = await checkHost(
    { dns: world },
    { ip, domain, sender: `postmaster@${domain}`, helo: 'mail.test', now: new Date() },
  )
  return result.result
}

test('a hosted record is served over real DNS and passes exactly its sources', async () => {
  const m = await activate('served.example', {
    sources: [
      { kind: 'include', domain: '_spf.mailer.example' },
      { kind: 'include', domain: 'sendgrid.net' },
      { kind: 'ip4', network: '203.0.113.0/28' },
      { kind: 'ip6', network: '2001:db8:5::/48' },
    ],
  })
  const answer = await world.resolve(m.hosted_name, 'TXT')
  expect(answer).toMatchObject({ status: 'ok' })
  const texts =
    answer.status === 'ok' ? answer.records.map((r) => (r.type === 'TXT' ? r.strings.join('') : '')) : []
  expect(texts).toEqual([m.served.records[0].text])
  for (const ip of ['192.0.2.10', '149.72.10.20', '167.89.1.1', '203.0.113.9', '2001:db8:5::25']) {
    expect(await check('served.example', m.hosted_name, ip), ip).toBe('pass')
  }
  for (const ip of ['198.18.0.1', '203.0.113.16', '2001:db8:6::1']) {
    expect(await check('served.example', m.hosted_name, ip), ip).toBe('fail')
  }
})

test('flattened and chained records: every _spfN name is served and evaluated', async () => {
  const networks = Array.from({ length: 40 }, (_, i) => ({ kind: 'ip4', network: `198.51.${i}.0/24` }))
  const m = await activate('chained.example', {
    sources: [...networks, { kind: 'include', domain: 'big.example' }],
  })
  expect(m.served.flattened).toBe(true)
  expect(m.served.records.length).toBeGreaterThan(1)
  for (const record of m.served.records) {
    const answer = await world.resolve(record.name, 'TXT')
    expect(answer.status, record.name).toBe('ok')
  }
  for (const ip of ['198.51.0.1', '198.51.39.200', '10.0.1.7', '10.0.9.250']) {
    expect(await check('chained.example', m.hosted_name, ip), ip).toBe('pass')
  }
  expect(await check('chained.example', m.hosted_name, '10.0.10.1')).toBe('fail')
})

test('names in the zone without records: the apex has no TXT, unknown labels do not exist', async () => {
  expect(await world.resolve(SPF_ZONE, 'TXT')).toMatchObject({ status: 'nodata' })
  expect(await world.resolve(`nobody.${SPF_ZONE}`, 'TXT')).toMatchObject({ status: 'nxdomain' })
})

test('a rollback is what the responder serves next', async () => {
  const before = await activate('rolled.example', { sources: [{ kind: 'ip4', network: '192.0.2.77' }] })
  const changed = await s.t.request('POST', '/api/v1/domains/rolled.example/spf/activate', {
    token: owner.token,
    body: { sources: [{ kind: 'ip4', network: '192.0.2.88' }] },
  })
  expect(changed.body.data.management.version).toBe(2)
  expect(await check('rolled.example', before.hosted_name, '192.0.2.88')).toBe('pass')
  await s.t.request('POST', '/api/v1/domains/rolled.example/spf/rollback', {
    token: owner.token,
    body: { version: 1 },
  })
  expect(await check('rolled.example', before.hosted_name, '192.0.2.77')).toBe('pass')
  expect(await check('rolled.example', before.hosted_name, '192.0.2.88')).toBe('fail')
})
