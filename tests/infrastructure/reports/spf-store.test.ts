import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq, sql } from 'drizzle-orm'
import type { DnsResolver } from '../../../domain/dns/ports.ts'
import { spfActivated } from '../../../domain/events/event.ts'
import {
  type HostedRecords,
  type ManagedSpfConfig,
  planManagedRecord,
} from '../../../domain/spf-management/managed-record.ts'
import type { SpfChange } from '../../../domain/spf-management/ports.ts'
import { REFLATTEN_REASON, reflattenDue } from '../../../domain/spf-management/reflatten.ts'
import { rowsOf } from '../../../infrastructure/db/database.ts'
import { accounts } from '../../../infrastructure/db/schema/accounts.ts'
import { domains } from '../../../infrastructure/db/schema/domains.ts'
import { auditLog, hostedRecords, spfManagement } from '../../../infrastructure/db/schema/spf.ts'
import { eventsOf } from '../../../infrastructure/repositories/pg-event-outbox.ts'
import { pgSpfSourceActivity } from '../../../infrastructure/repositories/pg-spf-source-activity.ts'
import { pgSpfStore } from '../../../infrastructure/repositories/pg-spf-store.ts'
import { memoryDns, type Zone } from '../../support/memory-dns.ts'
import { createTestDatabase, type TestDatabase } from '../../support/test-db.ts'

// The SPF store on PostgreSQL and PGlite: one transaction per change (management row, version,
// hosted records, audit entry, event), optimistic concurrency, tenant scoping, what the DNS
// responder is told, the scheduled re-flatten, and the per-IP figures SPF management reads.

const ZONE = 'spf.dmarcwatch.test'
let tdb: TestDatabase
let store: ReturnType<typeof pgSpfStore>
let owner: string
let stranger: string
const ids: Record<string, number> = {}

const at = (iso: string) => new Date(iso)
const records = (hosted: string, texts: string[]): HostedRecords => ({
  records: texts.map((text, i) => ({ name: i === 0 ? hosted : `_spf${i}.${hosted}`, text, strings: [text] })),
  lookups: texts.length - 1,
  flattened: false,
  networks: 1,
  caveats: [],
})
const config = (network: string): ManagedSpfConfig => ({
  sources: [{ kind: 'ip4', network }],
  all: '-all',
  flatten: 'auto',
})

function change(domain: string, version: number, basedOn: number | null, texts: string[]): SpfChange {
  const hosted = `${domain.replaceAll('.', '-')}.${ZONE}`
  return {
    domainId: ids[domain]!,
    label: domain.replaceAll('.', '-'),
    hostedName: hosted,
    basedOn,
    version: {
      version,
      config: config(`192.0.2.${version}`),
      records: records(hosted, texts),
      reason: `change ${version}`,
      actor: 'user:test',
      createdAt: `2026-03-0${version}T10:00:00.000Z`,
    },
    action: basedOn === null ? 'spf.activate' : 'spf.add_source',
    before: basedOn === null ? null : config(`192.0.2.${basedOn}`),
    event:
      basedOn === null
        ? spfActivated(domain, `v=spf1 include:${hosted} -all`, hosted, at('2026-03-01T10:00:00Z'))
        : null,
  }
}

beforeAll(async () => {
  tdb = await createTestDatabase()
  const db = tdb.database.db
  store = pgSpfStore(db, { zone: ZONE })
  const [a, b] = await db
    .insert(accounts)
    .values([{ ingestKey: 'spf-owner' }, { ingestKey: 'spf-stranger' }])
    .returning({ id: accounts.id })
  owner = a!.id
  stranger = b!.id
  const rows = await db
    .insert(domains)
    .values([
      { accountId: owner, name: 'one.example', verificationToken: 't1', verifiedAt: new Date() },
      { accountId: owner, name: 'two.example', verificationToken: 't2' },
      { accountId: stranger, name: 'one.example', verificationToken: 't3' },
      { accountId: owner, name: 'replan.test', verificationToken: 't4' },
    ])
    .returning({ id: domains.id, accountId: domains.accountId, name: domains.name })
  for (const row of rows) ids[row.accountId === stranger ? `stranger:${row.name}` : row.name] = row.id
}, 60_000)
afterAll(() => tdb.drop())

describe('saveChange', () => {
  test('activation writes the management row, version 1, hosted records, an audit entry and the event', async () => {
    expect(await store.saveChange(owner, change('one.example', 1, null, ['v=spf1 a', 'v=spf1 b']))).toBe(
      'saved',
    )
    const state = await store.get(owner, ids['one.example']!)
    expect(state).toMatchObject({
      label: 'one-example',
      hostedName: `one-example.${ZONE}`,
      version: 1,
      config: config('192.0.2.1'),
      activatedAt: at('2026-03-01T10:00:00Z'),
      plannedAt: at('2026-03-01T10:00:00Z'),
    })
    expect(state!.records.records.map((r) => r.text)).toEqual(['v=spf1 a', 'v=spf1 b'])
    const db = tdb.database.db
    const hosted = await db
      .select()
      .from(hostedRecords)
      .where(eq(hostedRecords.domainId, ids['one.example']!))
    expect(hosted.map((r) => [r.name, r.kind, r.txt]).sort()).toEqual([
      [`_spf1.one-example.${ZONE}`, 'spf', ['v=spf1 b']],
      [`one-example.${ZONE}`, 'spf', ['v=spf1 a']],
    ])
    const audit = await db.select().from(auditLog).where(eq(auditLog.domainId, ids['one.example']!))
    expect(audit).toHaveLength(1)
    expect(audit[0]).toMatchObject({
      accountId: owner,
      actor: 'user:test',
      action: 'spf.activate',
      before: null,
    })
    const events = await eventsOf(db, owner)
    expect(events.map((e) => [e.type, e.data])).toEqual([
      [
        'spf.activated',
        {
          domain: 'one.example',
          record: `v=spf1 include:one-example.${ZONE} -all`,
          include: `one-example.${ZONE}`,
        },
      ],
    ])
  })

  test('a change replaces every hosted record of the domain; no second event', async () => {
    expect(await store.saveChange(owner, change('one.example', 2, 1, ['v=spf1 c']))).toBe('saved')
    const db = tdb.database.db
    const hosted = await db
      .select()
      .from(hostedRecords)
      .where(eq(hostedRecords.domainId, ids['one.example']!))
    expect(hosted.map((r) => [r.name, r.txt])).toEqual([[`one-example.${ZONE}`, ['v=spf1 c']]])
    expect((await store.get(owner, ids['one.example']!))!.version).toBe(2)
    const audit = await db.select().from(auditLog).where(eq(auditLog.domainId, ids['one.example']!))
    expect(audit.map((a) => a.action).sort()).toEqual(['spf.activate', 'spf.add_source'])
    expect(audit.find((a) => a.action === 'spf.add_source')!.before).toEqual({
      version: 1,
      config: config('192.0.2.1'),
    })
    expect(await eventsOf(db, owner)).toHaveLength(1)
  })

  test('a change planned on an old version, or a second activation, is a conflict and writes nothing', async () => {
    expect(await store.saveChange(owner, change('one.example', 3, 1, ['v=spf1 stale']))).toBe('conflict')
    expect(await store.saveChange(owner, change('one.example', 1, null, ['v=spf1 again']))).toBe('conflict')
    expect((await store.get(owner, ids['one.example']!))!.version).toBe(2)
    expect(await store.hostedTxt(`one-example.${ZONE}`)).toEqual({ txt: ['v=spf1 c'] })
    expect(await eventsOf(tdb.database.db, owner)).toHaveLength(1)
  })

  test('a label held by another domain is reported, not overwritten', async () => {
    expect(await store.labelTaken('one-example', ids['stranger:one.example']!)).toBe(true)
    expect(await store.labelTaken('one-example', ids['one.example']!)).toBe(false)
    const taken = { ...change('one.example', 1, null, ['v=spf1 x']), domainId: ids['stranger:one.example']! }
    expect(await store.saveChange(stranger, taken)).toBe('label_taken')
    expect(await store.get(stranger, ids['stranger:one.example']!)).toBeNull()
  })

  test("another account's domain cannot be activated through this account", async () => {
    const foreign = {
      ...change('one.example', 1, null, ['v=spf1 x']),
      domainId: ids['stranger:one.example']!,
      label: 'x',
      hostedName: `x.${ZONE}`,
    }
    await expect(store.saveChange(owner, foreign)).rejects.toThrow('not in account')
    expect(await store.hostedTxt(`x.${ZONE}`)).toBeNull()
  })
})

describe('reads are scoped by account', () => {
  test('get, versions and version', async () => {
    const id = ids['one.example']!
    expect(await store.get(stranger, id)).toBeNull()
    expect(await store.versions(stranger, id, { page: 1, perPage: 25 })).toEqual({ items: [], total: 0 })
    expect(await store.version(stranger, id, 1)).toBeNull()
    const page = await store.versions(owner, id, { page: 1, perPage: 1 })
    expect(page.total).toBe(2)
    expect(page.items.map((v) => [v.version, v.reason, v.createdAt])).toEqual([
      [2, 'change 2', '2026-03-02T10:00:00.000Z'],
    ])
    expect((await store.version(owner, id, 1))!.records.records).toHaveLength(2)
  })

  test('domain() finds only the caller’s domain and tells whether it is verified', async () => {
    expect(await store.domain(owner, 'one.example')).toEqual({
      id: ids['one.example']!,
      name: 'one.example',
      verified: true,
      automationLevel: 'manual',
    })
    expect((await store.domain(stranger, 'one.example'))!.id).toBe(ids['stranger:one.example']!)
    expect(await store.domain(stranger, 'two.example')).toBeNull()
  })
})

describe('hostedTxt (the DNS responder’s lookup)', () => {
  test('names with records, any case and a trailing dot', async () => {
    expect(await store.hostedTxt(`ONE-example.${ZONE.toUpperCase()}.`)).toEqual({ txt: ['v=spf1 c'] })
  })
  test('the zone and the names above it exist without records; anything else does not exist', async () => {
    expect(await store.hostedTxt(ZONE)).toEqual({ txt: [] })
    expect(await store.hostedTxt('dmarcwatch.test')).toEqual({ txt: [] })
    expect(await store.hostedTxt(`_spf1.one-example.${ZONE}`)).toBeNull()
    expect(await store.hostedTxt(`nobody.${ZONE}`)).toBeNull()
    expect(await store.hostedTxt(`x.one-example.${ZONE}`)).toBeNull()
  })
})

describe('the scheduled re-flatten', () => {
  const zones: Record<string, Zone> = {
    before: { 'mailer.test': [{ type: 'TXT', strings: ['v=spf1 ip4:192.0.2.0/24 -all'], ttl: 300 }] },
    after: { 'mailer.test': [{ type: 'TXT', strings: ['v=spf1 ip4:198.51.100.0/24 -all'], ttl: 300 }] },
  }
  let current = memoryDns(zones.before!)
  const dns: DnsResolver = { resolve: (name, type) => current.resolve(name, type) }
  const flatConfig: ManagedSpfConfig = {
    sources: [{ kind: 'include', domain: 'mailer.test' }],
    all: '-all',
    flatten: 'always',
  }
  const hosted = `replan-test.${ZONE}`
  const clock = { now: at('2026-03-10T00:00:00Z') }
  const run = () =>
    reflattenDue(
      { store: pgSpfStore(tdb.database.db, { zone: ZONE }), dns, now: () => clock.now, zone: ZONE },
      { olderThanHours: 6, limit: 10 },
    )

  beforeAll(async () => {
    const planned = await planManagedRecord(
      { dns },
      { domain: 'replan.test', zone: ZONE, config: flatConfig },
    )
    if (!planned.ok) throw new Error(planned.failure.code)
    expect(planned.value.records[0]!.text).toBe('v=spf1 ip4:192.0.2.0/24 -all')
    const saved = await store.saveChange(owner, {
      domainId: ids['replan.test']!,
      label: 'replan-test',
      hostedName: hosted,
      basedOn: null,
      version: {
        version: 1,
        config: flatConfig,
        records: planned.value,
        reason: 'activated',
        actor: 'user:test',
        createdAt: '2026-03-09T00:00:00.000Z',
      },
      action: 'spf.activate',
      before: null,
      event: null,
    })
    expect(saved).toBe('saved')
  })

  test('due records are listed oldest first, across accounts', async () => {
    const due = await store.listManagedForReplan(at('2026-03-09T12:00:00Z'), 10)
    expect(due.map((d) => [d.domainName, d.accountId])).toEqual([
      ['one.example', owner],
      ['replan.test', owner],
    ])
    expect(await store.listManagedForReplan(at('2026-03-01T00:00:00Z'), 10)).toEqual([])
  })

  test('unchanged networks only move the planning time', async () => {
    expect(await run()).toBe(2)
    const state = await store.get(owner, ids['replan.test']!)
    expect(state).toMatchObject({ version: 1, plannedAt: clock.now })
    // one.example's sources are networks only: re-planned, different from the hand-made records.
    expect((await store.get(owner, ids['one.example']!))!.version).toBe(3)
    expect(await run()).toBe(0)
  })

  test('changed networks are a new version by system, served at once', async () => {
    current = memoryDns(zones.after!)
    clock.now = at('2026-03-10T07:00:00Z')
    expect(await run()).toBe(2)
    const [latest] = (await store.versions(owner, ids['replan.test']!, { page: 1, perPage: 1 })).items
    expect(latest).toMatchObject({ version: 2, reason: REFLATTEN_REASON, actor: 'system' })
    expect(await store.hostedTxt(hosted)).toEqual({ txt: ['v=spf1 ip4:198.51.100.0/24 -all'] })
    const audit = await tdb.database.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.domainId, ids['replan.test']!))
    expect(audit.map((a) => [a.action, a.actor]).sort()).toEqual([
      ['spf.activate', 'user:test'],
      ['spf.reflatten', 'system'],
    ])
    const row = await tdb.database.db
      .select()
      .from(spfManagement)
      .where(eq(spfManagement.domainId, ids['replan.test']!))
    expect(row[0]!.plannedAt).toEqual(clock.now)
  })
})

describe('source activity', () => {
  beforeAll(async () => {
    const db = tdb.database.db
    const rollup = (
      accountId: string,
      domainId: number,
      day: string,
      ip: string,
      dkim: boolean,
      spf: boolean,
      messages: number,
      dkimDomains: string[],
    ) =>
      sql`insert into daily_rollups (account_id, domain_id, day, source_ip, disposition, dkim_aligned, spf_aligned, messages, dkim_domains, reports)
        values (${accountId}, ${domainId}, ${day}::date, ${ip}::inet, 'none', ${dkim}, ${spf}, ${messages}, ${`{${dkimDomains.join(',')}}`}::text[], 1)`
    const two = ids['two.example']!
    await db.execute(rollup(owner, two, '2026-03-01', '149.72.1.1', true, false, 10, ['sendgrid.net']))
    await db.execute(rollup(owner, two, '2026-03-02', '149.72.1.1', false, false, 5, ['other.example']))
    await db.execute(rollup(owner, two, '2026-03-02', '149.72.1.1', true, true, 3, []))
    await db.execute(rollup(owner, two, '2026-01-01', '192.0.2.9', false, false, 7, []))
    await db.execute(
      rollup(stranger, ids['stranger:one.example']!, '2026-03-02', '192.0.2.10', false, false, 7, []),
    )
    await db.execute(
      sql`insert into source_ips (ip, ptr, ptr_status, checked_at) values ('149.72.1.1', 'o1.sendgrid.net', 'ok', now())`,
    )
    await db.execute(
      sql`insert into source_overrides (domain_id, source_ip, status, updated_at) values (${two}, '192.0.2.9', 'unwanted', now())`,
    )
  })

  test('recent(): per IP since a day, with PTR, DKIM domains and the user’s verdict', async () => {
    const reader = pgSpfSourceActivity(tdb.database.db)
    expect(await reader.recent(owner, ids['two.example']!, '2026-02-01')).toEqual([
      {
        ip: '149.72.1.1',
        messages: 18,
        spfAligned: 3,
        dmarcPass: 13,
        ptr: 'o1.sendgrid.net',
        dkimDomains: ['other.example', 'sendgrid.net'],
        override: null,
      },
    ])
    const all = await reader.recent(owner, ids['two.example']!, '2025-01-01')
    expect(all.map((a) => [a.ip, a.override])).toEqual([
      ['149.72.1.1', null],
      ['192.0.2.9', 'unwanted'],
    ])
  })

  test('one(): since a day; another account’s IP is not there', async () => {
    const reader = pgSpfSourceActivity(tdb.database.db)
    expect((await reader.one(owner, ids['two.example']!, '192.0.2.9', '2025-12-01'))!.messages).toBe(7)
    expect(await reader.one(owner, ids['two.example']!, '192.0.2.9', '2026-02-01')).toBeNull()
    expect(await reader.one(owner, ids['two.example']!, '192.0.2.10', '2025-01-01')).toBeNull()
    expect(await reader.one(stranger, ids['two.example']!, '149.72.1.1', '2025-01-01')).toBeNull()
  })
})

test('versions and hosted records go with their domain', async () => {
  const db = tdb.database.db
  await db.delete(domains).where(eq(domains.id, ids['one.example']!))
  expect(await store.hostedTxt(`one-example.${ZONE}`)).toBeNull()
  const left = rowsOf<{ n: number }>(
    await db.execute(
      sql`select count(*)::int as n from spf_versions where domain_id = ${ids['one.example']!}`,
    ),
  )
  expect(left[0]!.n).toBe(0)
})
