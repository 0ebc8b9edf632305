import { expect, test } from 'bun:test'
import type { DnsRecord } from '../../../domain/dns/ports.ts'
import { listSources, type SourceDeps } from '../../../domain/sources/list-sources.ts'
import { dailySeries, periodDays } from '../../../domain/sources/source-intelligence.ts'
import type { SourceStats } from '../../../domain/sources/source-stats.ts'
import { resolveSpfTree } from '../../../domain/spf/include-tree.ts'
import { memoryDns } from '../../support/memory-dns.ts'

// The sources list: classification with SPF include evidence, overrides, status, filters, order,
// pages, and the per-service grouping over every source.

const txt = (text: string): DnsRecord => ({ type: 'TXT', strings: [text], ttl: 300 })
const dns = memoryDns({
  'shop.example': [txt('v=spf1 include:sendgrid.net ~all')],
  'sendgrid.net': [txt('v=spf1 ip4:198.51.100.0/24 -all')],
})

function stats(ip: string, messages: number, fields: Partial<SourceStats> = {}): SourceStats {
  return {
    ip,
    messages,
    dmarcPass: 0,
    dkimAligned: 0,
    spfAligned: 0,
    dkimPass: 0,
    spfPass: 0,
    forwarded: 0,
    quarantined: 0,
    rejected: 0,
    firstSeen: '2026-11-01',
    lastSeen: '2026-11-20',
    ptr: null,
    dkimDomains: [],
    spfDomains: [],
    ...fields,
  }
}

const all = [
  stats('74.125.0.9', 500, { dmarcPass: 500, ptr: 'mail-a.google.com' }),
  // Not in SendGrid's catalog ranges: the include of the published record is the only evidence.
  stats('198.51.100.7', 200, { dmarcPass: 190, spfPass: 200 }),
  stats('203.0.113.66', 50),
  stats('192.0.2.10', 50, { ptr: 'mx.partner.example' }),
  stats('192.0.2.11', 10, { ptr: 'list.lists.example', dkimDomains: ['googlegroups.com'], dmarcPass: 2 }),
]
const overrideAt = new Date('2026-11-21T00:00:00Z')
const deps: SourceDeps = {
  stats: async () => all,
  overrides: async () => [{ ip: '192.0.2.10', status: 'unwanted', note: 'old relay', updatedAt: overrideAt }],
  spfTree: (domain) => resolveSpfTree({ dns }, domain),
}
const period = { from: '2026-10-24', to: '2026-11-22' }
const list = (filter = {}, page = { page: 1, perPage: 25 }) =>
  listSources(deps, { domain: 'shop.example', period, filter, page })

test('sources are classified, overridden and sorted by messages', async () => {
  const found = await list()
  expect(found.total).toBe(5)
  expect(found.volume).toBe(810)
  const summary = found.items.map((v) => [v.stats.ip, v.classification.service?.id ?? null, v.status])
  expect(summary).toEqual([
    ['74.125.0.9', 'google_workspace', 'legitimate'],
    ['198.51.100.7', 'sendgrid', 'legitimate'],
    ['192.0.2.10', null, 'suspicious'],
    ['203.0.113.66', null, 'suspicious'],
    ['192.0.2.11', 'google_groups', 'forwarder'],
  ])
  const sendgrid = found.items[1]!
  expect(sendgrid.classification.confidence).toBe('medium')
  expect(sendgrid.classification.evidence).toEqual([
    { kind: 'spf_include', value: 'sendgrid.net', service: 'sendgrid' },
  ])
  // PTRs are never taken as forward-confirmed: a Google range makes it high, not the PTR.
  expect(found.items[0]!.classification.confidence).toBe('high')
  expect(found.items[2]!.override).toEqual({
    ip: '192.0.2.10',
    status: 'unwanted',
    note: 'old relay',
    updatedAt: overrideAt,
  })
})

test('filters by status, service and search; pages keep the order', async () => {
  expect((await list({ status: 'suspicious' })).items.map((v) => v.stats.ip)).toEqual([
    '192.0.2.10',
    '203.0.113.66',
  ])
  expect((await list({ service: 'SendGrid' })).items.map((v) => v.stats.ip)).toEqual(['198.51.100.7'])
  expect((await list({ q: '192.0.2.' })).total).toBe(2)
  expect((await list({ q: 'PARTNER' })).items.map((v) => v.stats.ip)).toEqual(['192.0.2.10'])
  expect((await list({ q: 'google' })).total).toBe(2)
  const second = await list({}, { page: 2, perPage: 2 })
  expect(second.total).toBe(5)
  expect(second.items.map((v) => v.stats.ip)).toEqual(['192.0.2.10', '203.0.113.66'])
  expect((await list({}, { page: 9, perPage: 2 })).items).toEqual([])
})

test('services group every source of the period, whatever the filter', async () => {
  const { services } = await list({ status: 'forwarder' })
  expect(services.map((s) => [s.id, s.sources, s.messages, s.dmarcPass])).toEqual([
    ['google_workspace', 1, 500, 500],
    ['sendgrid', 1, 200, 190],
    [null, 2, 100, 0],
    ['google_groups', 1, 10, 2],
  ])
  expect(services[0]!.share).toBeCloseTo(500 / 810)
  expect(services[2]!.name).toBe('Unidentified')
})

test('the daily series runs from the first reported day to the period end, zero days included', () => {
  const rows = [
    { day: '2026-11-18', messages: 10, dmarcPass: 9 },
    { day: '2026-11-20', messages: 5, dmarcPass: 5 },
    { day: '2026-11-20', messages: 1, dmarcPass: 0 },
  ]
  expect(dailySeries(rows, '2026-11-22')).toEqual([
    { day: '2026-11-18', messages: 10, dmarcPass: 9 },
    { day: '2026-11-19', messages: 0, dmarcPass: 0 },
    { day: '2026-11-20', messages: 6, dmarcPass: 5 },
    { day: '2026-11-21', messages: 0, dmarcPass: 0 },
    { day: '2026-11-22', messages: 0, dmarcPass: 0 },
  ])
  expect(dailySeries([], '2026-11-22')).toEqual([])
  expect(periodDays(period)).toBe(30)
})
