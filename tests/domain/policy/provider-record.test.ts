import { describe, expect, test } from 'bun:test'
import type { DnsAnswer } from '../../../domain/dns/ports.ts'
import type { DnsProvider, RecordSet } from '../../../domain/dns-providers/ports.ts'
import { providerOk } from '../../../domain/dns-providers/ports.ts'
import type { PublishDeps } from '../../../domain/dns-providers/publish.ts'
import type { Connection } from '../../../domain/dns-providers/use-cases.ts'
import type { ProviderWrite, WriteStore } from '../../../domain/dns-providers/writes.ts'
import { providerDmarc } from '../../../domain/policy/provider-record.ts'
import { ok } from '../../../domain/shared/result.ts'

// The ZoneDmarc port over the provider write path (domain/policy/provider-record.ts), with the
// provider and DNS as small in-memory doubles of their ports (the real PowerDNS path is
// tests/api/provider-progression.test.ts): which record counts, the conflict rule, and that a
// write the provider does not keep is put back to the previous record.

const ZONE = { id: 'example.com.', name: 'example.com' }
const NAME = '_dmarc.example.com'
const NONE = 'v=DMARC1; p=none'
const QUARANTINE = 'v=DMARC1; p=quarantine'

function world(initial: string[], options: { dropWrites?: number } = {}) {
  const sets = new Map<string, RecordSet>()
  if (initial.length > 0) sets.set(NAME, { name: NAME, type: 'TXT', ttl: 600, values: initial })
  let drop = options.dropWrites ?? 0
  const upserts: RecordSet[] = []
  const provider: DnsProvider = {
    kind: 'powerdns',
    authenticate: async () => providerOk({}),
    listZones: async () => providerOk([ZONE]),
    readRecords: async (_zone, filter) => {
      const set = sets.get(filter?.name ?? '')
      return providerOk(set && set.type === filter?.type ? [set] : [])
    },
    upsertRecordSet: async (_zone, set) => {
      upserts.push(set)
      // A provider that answers 200 and keeps nothing (the read-back must catch it).
      if (drop > 0) drop--
      else sets.set(set.name, set)
      return providerOk(undefined)
    },
    deleteRecordSet: async (_zone, name) => {
      sets.delete(name)
      return providerOk(undefined)
    },
  }
  const connection: Connection = {
    id: 'c1',
    accountId: 'a1',
    provider: 'powerdns',
    name: 'PowerDNS',
    settings: { provider: 'powerdns', base_url: 'https://pdns.example', server_id: 'localhost' },
    providerAccount: null,
    createdAt: new Date(0),
    lastVerifiedAt: new Date(0),
  } as Connection
  const log: ProviderWrite[] = []
  const writes: WriteStore = {
    insert: async (w) => {
      const row = { ...w, id: `w${log.length + 1}`, status: 'planned', error: null } as ProviderWrite
      log.push(row)
      return row
    },
    change: async (_a, id, change) => Object.assign(log.find((w) => w.id === id)!, change),
    get: async (_a, id) => log.find((w) => w.id === id) ?? null,
    list: async () => ({ items: log, total: log.length }) as never,
  }
  const dns = {
    resolve: async (): Promise<DnsAnswer> => {
      const set = sets.get(NAME)
      return set
        ? ({ status: 'ok', records: set.values.map((v) => ({ type: 'TXT', strings: [v], ttl: 1 })) } as never)
        : ({ status: 'nxdomain' } as never)
    },
  }
  const deps: PublishDeps = {
    connections: {
      all: async () => [connection],
      get: async () => connection,
    } as never,
    open: async () => providerOk(provider),
    dnsWrites: async () => ok(null),
    writes,
    dns,
    wait: async () => {},
    readBack: { attempts: 2, intervalMs: 0 },
    now: () => new Date('2026-11-26T00:00:00Z'),
  }
  return { port: providerDmarc(deps), sets, upserts, log }
}

describe('the _dmarc TXT at a connected provider', () => {
  test('reads the one DMARC value; none or several is no record', async () => {
    expect(await world([NONE, 'other text']).port.read('a1', 'example.com')).toEqual(
      ok({ record: NONE, connectionId: 'c1' }),
    )
    expect(await world([NONE, QUARANTINE]).port.read('a1', 'example.com')).toEqual(
      ok({ record: null, connectionId: 'c1' }),
    )
    expect(await world([]).port.read('a1', 'example.com')).toEqual(ok({ record: null, connectionId: 'c1' }))
    expect(await world([]).port.read('a1', 'elsewhere.org')).toEqual(ok(null))
  })

  test('writes the change, keeping other values and the TTL, read back: verified', async () => {
    const w = world([NONE, 'other text'])
    const change = { fromRecord: NONE, toRecord: QUARANTINE, actor: 'system', reason: 'advance' }
    const written = await w.port.write('a1', 'example.com', change)
    expect(written).toEqual(ok({ writeId: 'w1' }))
    expect(w.sets.get(NAME)).toMatchObject({ ttl: 600 })
    expect([...w.sets.get(NAME)!.values].sort()).toEqual(['other text', QUARANTINE])
    expect(w.log[0]).toMatchObject({ status: 'verified', actor: 'system' })
  })

  test('a record changed at the provider since the decision is a conflict, nothing written', async () => {
    const w = world([QUARANTINE])
    const change = { fromRecord: NONE, toRecord: QUARANTINE, actor: 'system', reason: 'advance' }
    const written = await w.port.write('a1', 'example.com', change)
    expect(written.ok).toBe(false)
    expect(!written.ok && written.failure.code).toBe('validation_failed')
    expect(w.upserts).toEqual([])
  })

  test('a write the provider accepted but does not hold is put back and reported', async () => {
    const w = world([NONE], { dropWrites: 1 })
    // The provider accepts the write and keeps nothing: the read-back catches it.
    const change = { fromRecord: NONE, toRecord: QUARANTINE, actor: 'system', reason: 'advance' }
    const written = await w.port.write('a1', 'example.com', change)
    expect(written.ok).toBe(false)
    expect(!written.ok && written.failure).toMatchObject({ code: 'dns_provider_error', writeId: 'w1' })
    expect(w.log[0]).toMatchObject({ status: 'failed' })
    // The previous set was written back (the second upsert) and is what the zone holds.
    expect(w.upserts.map((s) => s.values)).toEqual([[QUARANTINE], [NONE]])
    expect(w.sets.get(NAME)!.values).toEqual([NONE])
  })
})
