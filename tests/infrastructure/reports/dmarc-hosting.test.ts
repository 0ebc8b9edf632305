import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { dmarcProgressed } from '../../../domain/events/event.ts'
import type { NewPolicyChange } from '../../../domain/policy/ports.ts'
import { rowsOf } from '../../../infrastructure/db/database.ts'
import { pgDmarcHosting } from '../../../infrastructure/repositories/pg-dmarc-hosting.ts'
import { eventsOf } from '../../../infrastructure/repositories/pg-event-outbox.ts'
import { pgPolicyStore } from '../../../infrastructure/repositories/pg-policy-store.ts'
import { pgSpfStore } from '../../../infrastructure/repositories/pg-spf-store.ts'
import { startTestApp, type TestAccount, type TestApp } from '../../support/test-app.ts'

// Hosted DMARC records and the policy history on the real schema (PostgreSQL, and PGlite with
// DW_TEST_DB=pglite): labels, tenant isolation, the responder's view, one-transaction changes.

const ZONE = 'spf.dmarcwatch.test'
const AT = new Date('2026-11-24T06:00:00Z')
let t: TestApp
let owner: TestAccount
let stranger: TestAccount
const ids: Record<string, number> = {}
let hosting: ReturnType<typeof pgDmarcHosting>
let policy: ReturnType<typeof pgPolicyStore>

async function addDomain(account: TestAccount, name: string, automation = 'automatic') {
  await t.request('POST', '/api/v1/domains', { token: account.token, body: { domain_name: name } })
  const rows = rowsOf<{ id: string }>(
    await t.db.database.db.execute(sql`update domains set verified_at = now(), automation_level = ${automation}
      where name = ${name} and account_id = ${account.accountId} returning id`),
  )
  return Number(rows[0]!.id)
}

const host = (
  account: TestAccount,
  name: string,
  record = 'v=DMARC1; p=none; rua=mailto:k@dmarcwatch.test',
) =>
  hosting.host(account.accountId, {
    domainId: ids[`${account === owner ? '' : 'stranger:'}${name}`]!,
    domainName: name,
    record,
    actor: 'user:test',
    at: AT,
  })

const count = async (query: ReturnType<typeof sql>) =>
  Number(rowsOf<{ n: string }>(await t.db.database.db.execute(query))[0]!.n)

beforeAll(async () => {
  t = await startTestApp()
  owner = await t.account()
  stranger = await t.account()
  const levels = {
    'one.example': 'automatic',
    'managed.example': 'automatic',
    'assisted.example': 'assisted',
  }
  for (const [name, level] of Object.entries({ ...levels, 'manual.example': 'manual' }))
    ids[name] = await addDomain(owner, name, level)
  ids['stranger:one.example'] = await addDomain(stranger, 'one.example')
  // SPF is managed for one domain: its DMARC name reuses the SPF label.
  await t.db.database.db.execute(sql`insert into spf_management
    (domain_id, account_id, label, hosted_name, config, version, activated_at, planned_at)
    values (${ids['managed.example']!}, ${owner.accountId}, 'h---managedlabel', ${`h---managedlabel.${ZONE}`}, '{}'::jsonb, 1, now(), now())`)
  hosting = pgDmarcHosting(t.db.database.db, { zone: ZONE })
  policy = pgPolicyStore(t.db.database.db, { zone: ZONE })
}, 60_000)
afterAll(() => t.close())

describe('hosting', () => {
  test('one row of kind dmarc under the readable label, audited; hosting again changes nothing', async () => {
    const first = await host(owner, 'one.example')
    expect(first).toMatchObject({ created: true, hosted: { name: `one-example._dmarc.${ZONE}` } })
    const again = await host(owner, 'one.example', 'v=DMARC1; p=reject')
    expect(again).toMatchObject({
      created: false,
      hosted: { record: 'v=DMARC1; p=none; rua=mailto:k@dmarcwatch.test' },
    })
    expect(await count(sql`select count(*) as n from hosted_records where kind = 'dmarc'`)).toBe(1)
    expect(await count(sql`select count(*) as n from audit_log where action = 'dmarc.host'`)).toBe(1)
  })

  test('a managed domain reuses its SPF label; the same name in another account gets a keyed label', async () => {
    expect((await host(owner, 'managed.example')).hosted.name).toBe(`h---managedlabel._dmarc.${ZONE}`)
    const theirs = await host(stranger, 'one.example')
    expect(theirs.created).toBe(true)
    expect(theirs.hosted.name).toMatch(
      new RegExp(`^h---[a-z0-9]{20}\\._dmarc\\.${ZONE.replaceAll('.', '\\.')}$`),
    )
  })

  test('the responder serves the hosted names, and _dmarc.<zone> exists without records', async () => {
    const responder = pgSpfStore(t.db.database.db, { zone: ZONE })
    expect(await responder.hostedTxt(`ONE-EXAMPLE._dmarc.${ZONE}.`)).toEqual({
      txt: ['v=DMARC1; p=none; rua=mailto:k@dmarcwatch.test'],
    })
    expect(await responder.hostedTxt(`_dmarc.${ZONE}`)).toEqual({ txt: [] })
    expect(await responder.hostedTxt(`nobody._dmarc.${ZONE}`)).toBeNull()
  })

  test("reads and writes are scoped by account: another account's domain id reaches nothing", async () => {
    expect(await hosting.get(stranger.accountId, ids['one.example']!)).toBeNull()
    const foreign = {
      domainId: ids['one.example']!,
      record: 'v=DMARC1; p=reject',
      actor: 'x',
      reason: 'x',
      at: AT,
    }
    expect(await hosting.update(stranger.accountId, { ...foreign, policyChange: null })).toBeNull()
    await expect(hosting.host(stranger.accountId, { ...foreign, domainName: 'one.example' })).rejects.toThrow(
      'not in account',
    )
    expect((await hosting.get(owner.accountId, ids['one.example']!))!.record).toContain('p=none')
  })
})

const advance = (
  fromRecord: string,
  toRecord: string,
  fields: Partial<NewPolicyChange> = {},
): NewPolicyChange => ({
  kind: 'advance',
  from: { policy: 'none', pct: null },
  to: { policy: 'quarantine', pct: null },
  fromRecord,
  toRecord,
  reason: 'ready',
  actor: 'system',
  at: AT,
  ...fields,
})

describe('policy changes', () => {
  const NONE = 'v=DMARC1; p=none; rua=mailto:k@dmarcwatch.test'
  const QUARANTINE = 'v=DMARC1; p=quarantine; rua=mailto:k@dmarcwatch.test'

  test('a proposal waits once; the same proposal again is unchanged', async () => {
    const id = ids['assisted.example']!
    await hosting.host(owner.accountId, {
      domainId: id,
      domainName: 'assisted.example',
      record: NONE,
      actor: 'u',
      at: AT,
    })
    expect(await policy.propose(owner.accountId, id, advance(NONE, QUARANTINE))).toBe('proposed')
    expect(await policy.propose(owner.accountId, id, advance(NONE, QUARANTINE))).toBe('unchanged')
    expect(await policy.pending(stranger.accountId, id)).toBeNull()
    expect((await policy.pending(owner.accountId, id))!.to).toEqual({ policy: 'quarantine', pct: null })
  })

  test('apply: record, history, audit and event in one go; a stale record is a conflict', async () => {
    const id = ids['assisted.example']!
    const pending = (await policy.pending(owner.accountId, id))!
    const event = dmarcProgressed('assisted.example', 'none', 'quarantine', 'ready', AT)
    expect(await policy.apply(stranger.accountId, id, { ...advance(NONE, QUARANTINE), event })).toBe(
      'conflict',
    )
    expect(await policy.apply(owner.accountId, id, { ...advance('stale', QUARANTINE), event })).toBe(
      'conflict',
    )
    expect(await eventsOf(t.db.database.db, owner.accountId)).toHaveLength(0)
    const applied = await policy.apply(owner.accountId, id, {
      ...advance(NONE, QUARANTINE, { actor: 'user:1' }),
      proposalId: pending.id,
      event,
    })
    expect(applied).toBe('applied')
    expect((await hosting.get(owner.accountId, id))!.record).toBe(QUARANTINE)
    const [latest] = await policy.history(owner.accountId, id, 10)
    expect(latest).toMatchObject({ id: pending.id, status: 'applied', actor: 'user:1', appliedAt: AT })
    expect(await policy.pending(owner.accountId, id)).toBeNull()
    const events = await eventsOf(t.db.database.db, owner.accountId)
    expect(events.map((e) => [e.type, e.data])).toEqual([
      ['dmarc.progressed', { domain: 'assisted.example', from: 'none', to: 'quarantine', reason: 'ready' }],
    ])
    expect(await count(sql`select count(*) as n from audit_log where action = 'dmarc.progress'`)).toBe(1)
  })

  test('a rollback marks the change it undoes', async () => {
    const id = ids['assisted.example']!
    const [change] = await policy.history(owner.accountId, id, 1)
    const event = dmarcProgressed('assisted.example', 'quarantine', 'none', 'spike', AT)
    const back = { ...advance(QUARANTINE, NONE), kind: 'rollback' as const, rollsBack: change!.id, event }
    expect(await policy.apply(owner.accountId, id, back)).toBe('applied')
    const history = await policy.history(owner.accountId, id, 10)
    expect(history.map((c) => [c.kind, c.status, c.rolledBackAt !== null])).toEqual([
      ['rollback', 'applied', false],
      ['advance', 'applied', true],
    ])
  })

  test('an edit of p through the hosting store enters the history and withdraws the proposal', async () => {
    const id = ids['one.example']!
    const current = (await hosting.get(owner.accountId, id))!.record
    await policy.propose(owner.accountId, id, advance(current, QUARANTINE))
    await hosting.update(owner.accountId, {
      domainId: id,
      record: 'v=DMARC1; p=reject',
      actor: 'user:1',
      reason: 'edited',
      at: AT,
      policyChange: {
        from: { policy: 'none', pct: null },
        to: { policy: 'reject', pct: null },
        fromRecord: current,
      },
    })
    const history = await policy.history(owner.accountId, id, 10)
    expect(history.map((c) => [c.kind, c.status])).toEqual([
      ['edit', 'applied'],
      ['advance', 'withdrawn'],
    ])
    expect(history[0]).toMatchObject({
      from: { policy: 'none' },
      to: { policy: 'reject' },
      toRecord: 'v=DMARC1; p=reject',
    })
    expect(await policy.withdraw(owner.accountId, id)).toBe(false)
  })

  test('candidates: verified, hosted, automation other than manual, in id order', async () => {
    const id = ids['manual.example']!
    await hosting.host(owner.accountId, {
      domainId: id,
      domainName: 'manual.example',
      record: NONE,
      actor: 'u',
      at: AT,
    })
    const names = (await policy.candidates(0, 100)).map((c) => c.name)
    expect(names).toContain('assisted.example')
    expect(names).toContain('managed.example')
    expect(names).not.toContain('manual.example')
    const first = (await policy.candidates(0, 1))[0]!
    expect((await policy.candidates(first.domainId, 100)).map((c) => c.domainId)).not.toContain(
      first.domainId,
    )
  })
})
