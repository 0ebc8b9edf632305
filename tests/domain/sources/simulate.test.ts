import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import type { DnsResolver } from '../../../domain/dns/ports.ts'
import type { Result } from '../../../domain/shared/result.ts'
import { type SimulateSpfInput, type SpfSimulation, simulateSpf } from '../../../domain/sources/simulate.ts'
import type { SourceStats } from '../../../domain/sources/source-stats.ts'
import { overlaySpfRecord } from '../../../domain/spf/overlay-resolver.ts'
import { createDnsPacketResolver } from '../../../infrastructure/dns/dns-packet-resolver.ts'
import { type DnsTestServer, startDnsServer, type Zone } from '../../support/dns-server.ts'

// Real sockets: a loopback authoritative server and the project's wire-format resolver, so the
// includes of a proposed record are fetched as they would be in production.
const zone: Zone = {
  // What is published today; the simulations must never read it.
  'example.test': [
    { type: 'TXT', data: 'v=spf1 include:_spf.esp.test ip4:192.0.2.0/24 -all' },
    { type: 'TXT', data: 'site-verification=abc' },
    { type: 'A', data: '192.0.2.10' },
  ],
  '_spf.esp.test': [{ type: 'TXT', data: 'v=spf1 ip4:198.51.100.0/24 ~all' }],
  'nospf.test': [{ type: 'A', data: '192.0.2.99' }],
  'flaky.test': [{ type: 'TXT', data: 'v=spf1 ip4:203.0.113.0/24 -all' }],
}

let server: DnsTestServer
let dns: DnsResolver
const now = () => new Date('2026-01-01T00:00:00Z')

beforeAll(async () => {
  server = await startDnsServer(zone)
  dns = createDnsPacketResolver({ servers: [{ host: '127.0.0.1', port: server.port }], timeoutMs: 500 })
})
afterAll(() => server.stop())
beforeEach(() => server.reset())

const stats = (ip: string, fields: Partial<SourceStats> = {}): SourceStats => ({
  ip,
  messages: 100,
  dmarcPass: 100,
  dkimAligned: 0,
  spfAligned: 100,
  dkimPass: 0,
  spfPass: 100,
  forwarded: 0,
  quarantined: 0,
  rejected: 0,
  firstSeen: '2026-01-01',
  lastSeen: '2026-01-07',
  ptr: null,
  dkimDomains: [],
  spfDomains: ['example.test'],
  ...fields,
})

async function simulate(input: Partial<SimulateSpfInput> & Pick<SimulateSpfInput, 'proposedRecord'>) {
  const result = await simulateSpf({ dns, now }, { domain: 'example.test', sources: [], ...input })
  if (!result.ok) throw new Error(`unexpected failure: ${JSON.stringify(result.failure)}`)
  return result.value
}

const byIp = (simulation: SpfSimulation, ip: string) => simulation.sources.find((s) => s.ip === ip)!

function expectInvalid(result: Result<unknown>, field: string) {
  expect(result.ok).toBe(false)
  if (result.ok) return
  expect(result.failure.code).toBe('validation_failed')
  if (result.failure.code === 'validation_failed') expect(Object.keys(result.failure.errors)).toEqual([field])
}

describe('overlaySpfRecord', () => {
  test('serves the proposed record for the domain TXT only; everything else is the real DNS', async () => {
    const overlay = overlaySpfRecord(dns, 'Example.Test.', 'v=spf1 -all')
    expect(await overlay.resolve('example.test', 'TXT')).toEqual({
      status: 'ok',
      records: [{ type: 'TXT', strings: ['v=spf1 -all'], ttl: 0 }],
      authenticated: false,
    })
    const a = await overlay.resolve('example.test', 'A')
    expect(a.status === 'ok' && a.records).toEqual([{ type: 'A', address: '192.0.2.10', ttl: 300 }])
    const include = await overlay.resolve('_spf.esp.test', 'TXT')
    expect(include.status).toBe('ok')
    expect(server.queries.map((q) => `${q.type} ${q.name}`)).toEqual(['A example.test', 'TXT _spf.esp.test'])
  })
})

describe('simulateSpf', () => {
  test("removing an include makes the ESP's SPF-only mail newly fail, with its volume", async () => {
    const sources = [
      // The ESP: 1000 messages, DMARC passes for all, DKIM aligned for only 400.
      stats('198.51.100.7', { messages: 1000, dmarcPass: 1000, dkimAligned: 400, spfAligned: 1000 }),
      // Same ESP, but DKIM-aligned throughout: losing SPF costs nothing.
      stats('198.51.100.8', { messages: 300, dmarcPass: 300, dkimAligned: 300, spfAligned: 300 }),
      // Own server, still listed.
      stats('192.0.2.10', { messages: 500, dmarcPass: 500, spfAligned: 500 }),
    ]
    const sim = await simulate({ proposedRecord: 'v=spf1 ip4:192.0.2.0/24 -all', sources })

    expect(byIp(sim, '198.51.100.7')).toMatchObject({
      proposed: 'fail',
      mechanism: '-all',
      outcome: 'newly_failing',
      newlyFailing: 600,
      wouldPassDmarc: 400,
      currentSpfAlignedShare: 1,
    })
    expect(byIp(sim, '198.51.100.8')).toMatchObject({
      proposed: 'fail',
      outcome: 'unchanged',
      newlyFailing: 0,
    })
    expect(byIp(sim, '192.0.2.10')).toMatchObject({ proposed: 'pass', outcome: 'unchanged' })
    expect(sim.newlyFailing.map((s) => s.ip)).toEqual(['198.51.100.7'])
    expect(sim.newlyPassing).toEqual([])
    expect(sim.totals).toEqual({
      sources: 3,
      messages: 1800,
      currentlyPassingDmarc: 1800,
      wouldPassDmarc: 1200,
      newlyFailing: { sources: 1, messages: 600 },
      newlyPassing: { sources: 0, messages: 0 },
      unaffected: { sources: 0, messages: 0 },
      permerror: 0,
      temperror: 0,
    })
    expect(sim).toMatchObject({ lookups: 0, lookupLimit: 10, recordProblems: [], truncated: false })
    // The published record (with the include) was never asked for.
    expect(server.queries.filter((q) => q.type === 'TXT')).toEqual([])
    expect(sim.sources.map((s) => s.ip)).toEqual(['198.51.100.7', '192.0.2.10', '198.51.100.8'])
  })

  test('adding an ip4 makes a failing source newly pass; includes resolve through the real DNS', async () => {
    const sources = [
      stats('203.0.113.5', { messages: 200, dmarcPass: 20, dkimAligned: 20, spfAligned: 0, spfPass: 0 }),
      stats('198.51.100.7', { messages: 50, dmarcPass: 50 }),
    ]
    const proposedRecord = '  v=spf1 include:_spf.esp.test ip4:203.0.113.5 -all  '
    const sim = await simulate({ proposedRecord, sources })

    expect(sim.proposedRecord).toBe('v=spf1 include:_spf.esp.test ip4:203.0.113.5 -all')
    expect(byIp(sim, '203.0.113.5')).toMatchObject({
      proposed: 'pass',
      mechanism: 'ip4:203.0.113.5',
      outcome: 'newly_passing',
      newlyPassing: 180,
      wouldPassDmarc: 200,
      currentSpfAlignedShare: 0,
    })
    expect(byIp(sim, '198.51.100.7')).toMatchObject({
      proposed: 'pass',
      mechanism: 'include:_spf.esp.test',
      outcome: 'unchanged',
    })
    expect(sim.totals.newlyPassing).toEqual({ sources: 1, messages: 180 })
    expect(sim.totals.wouldPassDmarc).toBe(250)
    expect(sim.lookups).toBe(1)
    // The include was fetched once for the analysis and both checks (one cache per simulation).
    expect(server.queries.filter((q) => q.name === '_spf.esp.test')).toHaveLength(1)
  })

  test("a source whose SPF domain is another domain (an ESP's bounce domain) is unaffected", async () => {
    const sources = [
      stats('198.51.100.20', {
        messages: 400,
        dmarcPass: 400,
        spfAligned: 0,
        spfDomains: ['bounces.esp.test'],
      }),
      stats('198.51.100.21', { messages: 10, dmarcPass: 10, spfDomains: ['mail.example.test'] }),
    ]
    const sim = await simulate({ proposedRecord: 'v=spf1 -all', sources })
    for (const ip of ['198.51.100.20', '198.51.100.21']) {
      expect(byIp(sim, ip)).toMatchObject({ outcome: 'unaffected', proposed: null, newlyFailing: 0 })
    }
    expect(byIp(sim, '198.51.100.20').wouldPassDmarc).toBe(400)
    expect(sim.totals.unaffected).toEqual({ sources: 2, messages: 410 })
    expect(sim.totals.newlyFailing).toEqual({ sources: 0, messages: 0 })
  })

  test('an invalid proposed record, domain or limit is a validation failure', async () => {
    const base = { domain: 'example.test', sources: [stats('192.0.2.1')] }
    const syntax = await simulateSpf({ dns, now }, { ...base, proposedRecord: 'v=spf1 ip4:300.1.1.1 -all' })
    expectInvalid(syntax, 'record')
    if (!syntax.ok && syntax.failure.code === 'validation_failed') {
      expect(syntax.failure.message).toContain("at 'ip4:300.1.1.1'")
    }
    expectInvalid(await simulateSpf({ dns, now }, { ...base, proposedRecord: 'spf1 -all' }), 'record')
    expectInvalid(
      await simulateSpf(
        { dns, now },
        { ...base, proposedRecord: 'v=spf1 -all redirect=a.test redirect=b.test' },
      ),
      'record',
    )
    expectInvalid(
      await simulateSpf({ dns, now }, { ...base, domain: 'localhost', proposedRecord: 'v=spf1' }),
      'domain',
    )
    expectInvalid(
      await simulateSpf({ dns, now }, { ...base, proposedRecord: 'v=spf1', maxSources: 0 }),
      'max_sources',
    )
    expect(server.queries).toEqual([])
  })

  test('a record that evaluates to permerror fails every source that relied on SPF, and says why', async () => {
    const sources = [
      stats('198.51.100.7', { messages: 100, dmarcPass: 100, dkimAligned: 30 }),
      stats('192.0.2.10', { messages: 50, dmarcPass: 50, dkimAligned: 50 }),
    ]
    const sim = await simulate({ proposedRecord: 'v=spf1 include:nospf.test -all', sources })
    expect(byIp(sim, '198.51.100.7')).toMatchObject({
      proposed: 'permerror',
      outcome: 'newly_failing',
      newlyFailing: 70,
    })
    expect(byIp(sim, '198.51.100.7').reason).toContain('nospf.test has no SPF record')
    expect(byIp(sim, '192.0.2.10')).toMatchObject({ proposed: 'permerror', outcome: 'unchanged' })
    expect(sim.totals.permerror).toBe(2)
    expect(sim.recordProblems.map((p) => p.code)).toEqual(['include_not_found'])

    const terms = Array.from({ length: 11 }, (_, i) => `a:h${i}.example.test`).join(' ')
    const tooMany = await simulate({ proposedRecord: `v=spf1 ${terms} -all`, sources })
    expect(tooMany.lookups).toBe(11)
    expect(tooMany.recordProblems.map((p) => p.code)).toContain('lookup_limit_exceeded')
  })

  test('a DNS failure during the replay is a temperror for that source, counted as not passing', async () => {
    server.behave('flaky.test', { rcode: 'SERVFAIL' })
    const sources = [stats('203.0.113.9', { messages: 80, dmarcPass: 80 })]
    const sim = await simulate({ proposedRecord: 'v=spf1 include:flaky.test -all', sources })
    expect(byIp(sim, '203.0.113.9')).toMatchObject({
      proposed: 'temperror',
      outcome: 'newly_failing',
      newlyFailing: 80,
    })
    expect(byIp(sim, '203.0.113.9').reason).toContain('flaky.test')
    expect(sim.totals.temperror).toBe(1)
  })

  test('only the largest maxSources sources are evaluated, with a bounded number in flight', async () => {
    const sizes = [5, 50, 20, 50, 1, 7]
    const sources = sizes.map((messages, i) => stats(`192.0.2.${100 + i}`, { messages, dmarcPass: messages }))
    const names = sources.map((s) => `${s.ip}.allow.test`)
    for (const name of names) server.behave(name, { delayMs: 30 })
    let inFlight = 0
    let peak = 0
    const counting: DnsResolver = {
      async resolve(name, type) {
        peak = Math.max(peak, ++inFlight)
        try {
          return await dns.resolve(name, type)
        } finally {
          inFlight--
        }
      },
    }
    const result = await simulateSpf(
      { dns: counting, now },
      {
        domain: 'example.test',
        proposedRecord: 'v=spf1 exists:%{i}.allow.test -all',
        sources,
        maxSources: 4,
        concurrency: 2,
      },
    )
    if (!result.ok) throw new Error('unexpected failure')
    const sim = result.value
    // Ties on volume are broken by IP.
    expect(sim.sources.map((s) => s.ip)).toEqual(['192.0.2.101', '192.0.2.103', '192.0.2.102', '192.0.2.105'])
    expect(sim).toMatchObject({ truncated: true, totalSources: 6, skippedMessages: 6 })
    expect(sim.totals).toMatchObject({
      sources: 4,
      messages: 127,
      newlyFailing: { sources: 4, messages: 127 },
    })
    expect(
      server.queries
        .filter((q) => q.type === 'A')
        .map((q) => q.name)
        .sort(),
    ).toEqual(['192.0.2.101', '192.0.2.102', '192.0.2.103', '192.0.2.105'].map((ip) => `${ip}.allow.test`))
    expect(peak).toBe(2)
  })
})
