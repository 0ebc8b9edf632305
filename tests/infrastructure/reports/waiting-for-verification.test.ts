import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { domainVerified } from '../../../domain/events/event.ts'
import { rowsOf } from '../../../infrastructure/db/database.ts'
import { PROCESS_MESSAGE } from '../../../infrastructure/queue/catalogue.ts'
import { pgDomainVerifications } from '../../../infrastructure/repositories/pg-domain-verification.ts'
import { pgIngestMessageStore } from '../../../infrastructure/repositories/pg-ingest-message-store.ts'
import { startTestApp, type TestApp } from '../../support/test-app.ts'

// Messages waiting for a domain's verification (docs/ingestion.md), on PostgreSQL and PGlite: the
// verification re-queues them in its transaction, a quarantine that comes after a verification
// goes straight back to the queue, the sweep finds what is left, and nothing crosses accounts.

let t: TestApp
const db = () => t.db.database.db
const WAITS = (domain: string) => ({
  code: 'domain_not_verified',
  message: `The report is for ${domain}, which is not verified yet.`,
  domain,
})

beforeAll(async () => {
  t = await startTestApp({}, { queue: true })
}, 60_000)
afterAll(() => t.close())

async function accountWith(domain: string): Promise<string> {
  const { accountId, token } = await t.account()
  expect((await t.request('POST', '/api/v1/domains', { token, body: { domain_name: domain } })).status).toBe(
    201,
  )
  return accountId
}

async function message(accountId: string): Promise<string> {
  const store = pgIngestMessageStore(db(), t.runtime.boss)
  return store.insertAndEnqueue({
    accountId,
    source: 'http',
    recipient: null,
    body: (() => {
      const bytes = new TextEncoder().encode(`message ${Math.random()}`)
      return {
        size: bytes.byteLength,
        sha256: `hash-${Math.random()}`,
        async *pieces() {
          yield bytes
        },
      }
    })(),
    receivedAt: new Date(),
    deferJob: false,
  })
}

const statusOf = async (id: string) =>
  rowsOf<{ status: string; domain: string | null }>(
    await db().execute(sql`select status, quarantine_domain as domain from ingest_messages where id = ${id}`),
  )[0]!

/** The message ids of the queued jobs, taken off the queue (no worker runs here). */
async function queued(): Promise<string[]> {
  const jobs = await t.runtime.boss!.fetch<{ messageId: string }>(PROCESS_MESSAGE.name, { batchSize: 100 })
  return jobs.map((job) => job.data.messageId)
}

test('verification re-queues the waiting messages of that domain, in that account only', async () => {
  const store = pgIngestMessageStore(db(), t.runtime.boss)
  const mine = await accountWith('shared.example')
  const theirs = await accountWith('shared.example')
  const [a, b, other] = [await message(mine), await message(mine), await message(theirs)]
  await queued()
  for (const id of [a, b]) await store.quarantine(id, WAITS('shared.example'), new Date())
  await store.quarantine(other, WAITS('shared.example'), new Date())
  expect(await statusOf(a)).toEqual({ status: 'quarantined', domain: 'shared.example' })
  expect(await store.waitingFor(mine, 'shared.example')).toBe(2)

  const verifications = pgDomainVerifications(db(), t.runtime.boss)
  const event = domainVerified('shared.example', new Date())
  const marked = await verifications.markVerified(mine, 'shared.example', {
    event,
    proof: 'dmarc_rua',
    reason: null,
  })
  expect(marked?.requeued).toBe(2)
  expect(marked?.domain).toMatchObject({ verifiedBy: 'dmarc_rua' })
  expect((await queued()).sort()).toEqual([a, b].sort())
  expect(await statusOf(a)).toEqual({ status: 'pending', domain: null })
  expect(await store.waitingFor(mine, 'shared.example')).toBe(0)
  // The other account's domain of the same name is not verified, and its message still waits.
  expect(await statusOf(other)).toEqual({ status: 'quarantined', domain: 'shared.example' })

  // Only the transition re-queues: a second verification finds nothing to do.
  const again = await verifications.markVerified(mine, 'shared.example', {
    event,
    proof: 'dns_txt',
    reason: null,
  })
  expect(again).toMatchObject({ requeued: 0, domain: { verifiedBy: 'dmarc_rua' } })
})

test('a quarantine decided before a verification that committed meanwhile goes back to the queue', async () => {
  const store = pgIngestMessageStore(db(), t.runtime.boss)
  const accountId = await accountWith('late.example')
  const id = await message(accountId)
  await queued()
  // The job read the domain unverified; the verification commits before the job quarantines.
  await db().execute(sql`update domains set verified_at = now() where account_id = ${accountId}`)
  await store.quarantine(id, WAITS('late.example'), new Date())
  expect(await statusOf(id)).toEqual({ status: 'pending', domain: null })
  expect(await queued()).toEqual([id])
})

test('the sweep re-queues what still waits for domains verified meanwhile, and nothing else', async () => {
  const store = pgIngestMessageStore(db(), t.runtime.boss)
  const verified = await accountWith('swept.example')
  const unverified = await accountWith('unswept.example')
  const [a, b] = [await message(verified), await message(unverified)]
  await queued()
  await store.quarantine(a, WAITS('swept.example'), new Date())
  await store.quarantine(b, WAITS('unswept.example'), new Date())
  await db().execute(sql`update domains set verified_at = now() where account_id = ${verified}`)
  expect(await pgDomainVerifications(db(), t.runtime.boss).requeueWaiting()).toBe(1)
  expect(await queued()).toEqual([a])
  expect((await statusOf(b)).status).toBe('quarantined')
})
