import { describe, expect, test } from 'bun:test'
import type { DnsAnswer } from '../../../domain/dns/ports.ts'
import type { DnsProvider, RecordSet } from '../../../domain/dns-providers/ports.ts'
import { providerFail, providerOk } from '../../../domain/dns-providers/ports.ts'
import type { PublishDeps } from '../../../domain/dns-providers/publish.ts'
import type { Connection } from '../../../domain/dns-providers/use-cases.ts'
import type { ProviderWrite, WriteStore } from '../../../domain/dns-providers/writes.ts'
import { ok } from '../../../domain/shared/result.ts'
import type { SpfDomain } from '../../../domain/spf-management/ports.ts'
import {
  approveSpfProposal,
  rejectSpfProposal,
  type SpfProposal,
  type SpfProposalStore,
} from '../../../domain/spf-management/proposals.ts'

// Approving and rejecting SPF proposals (domain/spf-management/proposals.ts) over in-memory
// doubles of the provider, DNS and the stores (the real PowerDNS path is
// tests/api/provider-spf-proposals.test.ts): the write keeps other TXT values, a record changed
// since is stale, a failed write leaves the proposal waiting and the record in place.

const ZONE = { id: 'example.com.', name: 'example.com' }
const OLD = 'v=spf1 ip4:192.0.2.10 -all'
const NEW = 'v=spf1 ip4:192.0.2.10 ip4:198.51.100.7 -all'
const SITE = 'site-verification=abc'
const at = new Date('2026-11-26T00:00:00Z')

function world(initial: string[], options: { refuseWrites?: boolean } = {}) {
  const sets = new Map<string, RecordSet>()
  sets.set('example.com', { name: 'example.com', type: 'TXT', ttl: 600, values: initial })
  const provider: DnsProvider = {
    kind: 'powerdns',
    authenticate: async () => providerOk({}),
    listZones: async () => providerOk([ZONE]),
    readRecords: async (_zone, filter) => {
      const set = sets.get(filter?.name ?? '')
      return providerOk(set ? [set] : [])
    },
    upsertRecordSet: async (_zone, set) => {
      if (options.refuseWrites) return providerFail('unavailable', 'HTTP 503')
      sets.set(set.name, set)
      return providerOk(undefined)
    },
    deleteRecordSet: async (_zone, name) => {
      sets.delete(name)
      return providerOk(undefined)
    },
  }
  const connection = { id: 'c1', accountId: 'a1', provider: 'powerdns', name: 'PowerDNS' } as Connection
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
    resolve: async (): Promise<DnsAnswer> =>
      ({
        status: 'ok',
        records: sets.get('example.com')!.values.map((v) => ({ type: 'TXT', strings: [v], ttl: 1 })),
      }) as never,
  }
  const providers: PublishDeps = {
    connections: { all: async () => [connection], get: async () => connection } as never,
    open: async () => providerOk(provider),
    dnsWrites: async () => ok(null),
    writes,
    dns,
    wait: async () => {},
    readBack: { attempts: 2, intervalMs: 0 },
    now: () => at,
  }
  const proposal: SpfProposal = {
    id: 1,
    status: 'proposed',
    fromRecord: OLD,
    toRecord: NEW,
    before: { name: 'example.com', type: 'TXT', ttl: 600, values: [OLD, SITE] },
    after: { name: 'example.com', type: 'TXT', ttl: 600, values: [SITE, NEW] },
    reason: 'add-to-spf 198.51.100.7',
    actor: 'user:u1',
    createdAt: at,
    decidedAt: null,
    decidedBy: null,
    writeId: null,
  }
  const proposals: SpfProposalStore = {
    propose: async () => proposal,
    list: async () => [proposal],
    get: async (_a, _d, id) => (id === proposal.id ? proposal : null),
    decide: async (_a, _d, id, decision) => {
      if (id !== proposal.id || proposal.status !== 'proposed') return null
      Object.assign(proposal, {
        status: decision.status,
        decidedAt: decision.at,
        decidedBy: decision.by,
        writeId: decision.writeId ?? null,
      })
      return proposal
    },
  }
  const domain: SpfDomain = { id: 7, name: 'example.com', verified: true, automationLevel: 'assisted' }
  const deps = { store: { domain: async () => domain }, proposals, providers, now: () => at }
  return { deps, sets, log, proposal }
}

const input = { accountId: 'a1', name: 'example.com', id: 1, actor: 'user:u2' }

describe('SPF proposals', () => {
  test('approving writes the proposed record, keeping the other TXT values, and records the write', async () => {
    const w = world([OLD, SITE])
    const approved = await approveSpfProposal(w.deps, input)
    expect(approved.ok).toBe(true)
    expect([...w.sets.get('example.com')!.values].sort()).toEqual([SITE, NEW].sort())
    expect(w.log[0]).toMatchObject({ status: 'verified', actor: 'user:u2' })
    expect(w.proposal).toMatchObject({ status: 'applied', writeId: 'w1', decidedBy: 'user:u2' })
  })

  test('a record changed since the proposal is stale: withdrawn, nothing written', async () => {
    const w = world(['v=spf1 ip4:192.0.2.99 -all', SITE])
    const approved = await approveSpfProposal(w.deps, input)
    expect(!approved.ok && approved.failure).toMatchObject({ code: 'proposal_stale' })
    expect(w.log).toEqual([])
    expect(w.proposal.status).toBe('withdrawn')
  })

  test('a write the provider refuses leaves the record and the proposal waiting', async () => {
    const w = world([OLD, SITE], { refuseWrites: true })
    const approved = await approveSpfProposal(w.deps, input)
    expect(!approved.ok && approved.failure).toMatchObject({ code: 'dns_provider_error', writeId: 'w1' })
    expect(w.sets.get('example.com')!.values).toEqual([OLD, SITE])
    expect(w.proposal.status).toBe('proposed')
  })

  test('rejecting discards it; a decided proposal cannot be decided again', async () => {
    const w = world([OLD, SITE])
    expect((await rejectSpfProposal(w.deps, input)).ok).toBe(true)
    expect(w.proposal.status).toBe('rejected')
    const again = await approveSpfProposal(w.deps, input)
    expect(!again.ok && again.failure.code).toBe('validation_failed')
    const unknown = await rejectSpfProposal(w.deps, { ...input, id: 2 })
    expect(!unknown.ok && unknown.failure).toEqual({ code: 'not_found', resource: 'spf_proposal' })
    expect(w.log).toEqual([])
  })
})
