import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../../infrastructure/db/database.ts'
import {
  pgMailSuppressionStore,
  pgUnsubscribeTokenStore,
  pruneNotificationMail,
} from '../../../infrastructure/repositories/pg-notification-mail-store.ts'
import { startTestApp, type TestApp } from '../../support/test-app.ts'

// Notification mail's bookkeeping on the database (docs/notifications.md "Mail"): what a suppression
// covers, tokens scoped to their account, and the nightly pruning.

let t: TestApp
beforeAll(async () => {
  t = await startTestApp()
}, 60_000)
afterAll(() => t.close())

const db = () => t.db.database.db
const count = async (query: ReturnType<typeof sql>) =>
  Number(rowsOf<{ n: number }>(await db().execute(query))[0]!.n)

test('an unsubscribe covers its kind and account only; a bounce covers every kind', async () => {
  const [a, b] = [await t.account(), await t.account()]
  const tokens = pgUnsubscribeTokenStore(db())
  const suppressions = pgMailSuppressionStore(db())
  const now = new Date()
  await tokens.issue('hash-1', { accountId: a.accountId, recipient: 'x@example.org', kind: 'digest' }, now)
  expect(await tokens.unsubscribe('hash-1', now)).toEqual({
    accountId: a.accountId,
    recipient: 'x@example.org',
    kind: 'digest',
  })
  // Repeated (RFC 8058 §3.2 allows it): no error, no second row.
  await tokens.unsubscribe('hash-1', now)
  expect(await tokens.unsubscribe('unknown', now)).toBeNull()
  expect(await suppressions.isSuppressed(a.accountId, 'X@example.org', 'digest')).toBe(true)
  expect(await suppressions.isSuppressed(a.accountId, 'x@example.org', 'alerts')).toBe(false)
  expect(await suppressions.isSuppressed(b.accountId, 'x@example.org', 'digest')).toBe(false)
  await suppressions.bounced(a.accountId, 'Gone@example.org', '550 5.1.1 no such user', now)
  expect(await suppressions.isSuppressed(a.accountId, 'gone@example.org', 'alerts')).toBe(true)
  expect(await suppressions.isSuppressed(a.accountId, 'gone@example.org', 'digest')).toBe(true)
})

test('pruning: tokens after a year, mailed alert changes after 30 days, digest runs after 60', async () => {
  const { accountId } = await t.account()
  await db().execute(sql`insert into mail_unsubscribe_tokens (token_hash, account_id, recipient, kind, created_at) values
    ('old', ${accountId}, 'a@example.org', 'alerts', now() - interval '400 days'),
    ('new', ${accountId}, 'a@example.org', 'alerts', now() - interval '300 days')`)
  await db().execute(sql`insert into digest_runs (account_id, frequency, local_date, enqueued_at) values
    (${accountId}, 'daily', current_date - 90, now()), (${accountId}, 'daily', current_date - 1, now())`)
  await pruneNotificationMail(db())
  expect(
    await count(sql`select count(*)::int as n from mail_unsubscribe_tokens where account_id = ${accountId}`),
  ).toBe(1)
  expect(await count(sql`select count(*)::int as n from digest_runs where account_id = ${accountId}`)).toBe(1)
})
