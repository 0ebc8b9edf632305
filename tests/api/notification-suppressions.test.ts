import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { stores } from '../../src/compose.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// GET /notifications/suppressions and DELETE /notifications/suppressions/{address}
// (docs/notifications.md "Unsubscribe", docs/api.md): the addresses not mailed and why, and
// lifting a suppression so the mail path sends to the address again. The whole path (a one-click
// unsubscribe, the list, the lift, the next mail delivered) runs through a real SMTP server in
// notification-mail.test.ts.

let t: TestApp
let account: TestAccount

beforeAll(async () => {
  t = await startTestApp()
  account = await t.account()
}, 60_000)
afterAll(() => t.close())

async function suppress(
  recipient: string,
  kind: string,
  reason: string,
  at: string,
  detail: string | null = null,
) {
  await t.db.database.db.execute(sql`insert into mail_suppressions (account_id, recipient, kind, reason, detail, at)
    values (${account.accountId}, ${recipient}, ${kind}, ${reason}, ${detail}, ${at}::timestamptz)`)
}

const path = '/api/v1/notifications/suppressions'
const isSuppressed = (recipient: string, kind: 'alerts' | 'digest') =>
  stores(t.db.database).mailSuppressions.isSuppressed(account.accountId, recipient, kind)

describe('suppressions', () => {
  test('none at first: an empty page', async () => {
    const res = await t.request('GET', path, { token: account.token })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ data: [], meta: { total: 0, page: 1, per_page: 25, last_page: 1 } })
  })

  test('listed newest first with the reason and the bounce answer, in pages', async () => {
    await suppress('old@example.org', 'digest', 'unsubscribed', '2026-01-01T00:00:00Z')
    await suppress('bounce@example.org', 'all', 'bounced', '2026-03-01T00:00:00Z', '550 5.1.1 no such user')
    await suppress('both@example.org', 'alerts', 'unsubscribed', '2026-02-01T00:00:00Z')
    await suppress('both@example.org', 'digest', 'unsubscribed', '2026-02-01T00:00:00Z')
    const res = await t.request('GET', path, { token: account.token })
    expect(res.body.data).toEqual([
      {
        recipient: 'bounce@example.org',
        kind: 'all',
        reason: 'bounced',
        detail: '550 5.1.1 no such user',
        at: '2026-03-01T00:00:00.000Z',
      },
      {
        recipient: 'both@example.org',
        kind: 'alerts',
        reason: 'unsubscribed',
        detail: null,
        at: '2026-02-01T00:00:00.000Z',
      },
      {
        recipient: 'both@example.org',
        kind: 'digest',
        reason: 'unsubscribed',
        detail: null,
        at: '2026-02-01T00:00:00.000Z',
      },
      {
        recipient: 'old@example.org',
        kind: 'digest',
        reason: 'unsubscribed',
        detail: null,
        at: '2026-01-01T00:00:00.000Z',
      },
    ])
    expect(res.body.meta.total).toBe(4)
    const second = await t.request('GET', `${path}?page=2&per_page=3`, { token: account.token })
    expect(second.body).toMatchObject({
      data: [{ recipient: 'old@example.org' }],
      meta: { total: 4, page: 2, per_page: 3, last_page: 2 },
    })
  })

  test('a lift of one kind leaves the other; without a kind every one goes; the mail path sends again', async () => {
    expect(await isSuppressed('both@example.org', 'alerts')).toBe(true)
    // Any case, as the settings take addresses; the stored address is lower-cased.
    const one = await t.request('DELETE', `${path}/Both%40Example.org?kind=alerts`, { token: account.token })
    expect(one.status).toBe(200)
    expect(one.body).toEqual({ data: { lifted: 1 } })
    expect(await isSuppressed('both@example.org', 'alerts')).toBe(false)
    expect(await isSuppressed('both@example.org', 'digest')).toBe(true)
    const bounced = await t.request('DELETE', `${path}/bounce@example.org`, { token: account.token })
    expect(bounced.body).toEqual({ data: { lifted: 1 } })
    expect(await isSuppressed('bounce@example.org', 'digest')).toBe(false)
    const rest = await t.request('DELETE', `${path}/both@example.org`, { token: account.token })
    expect(rest.body).toEqual({ data: { lifted: 1 } })
    const left = await t.request('GET', path, { token: account.token })
    expect(left.body.data.map((row: { recipient: string }) => row.recipient)).toEqual(['old@example.org'])
  })

  test('an address without a suppression, or of another kind, is 404; bad input is a 400', async () => {
    const none = await t.request('DELETE', `${path}/nobody@example.org`, { token: account.token })
    expect(none.status).toBe(404)
    expect(none.body).toEqual({ error: 'not_found', message: 'No such mail suppression in your account.' })
    const kind = await t.request('DELETE', `${path}/old@example.org?kind=alerts`, { token: account.token })
    expect(kind.status).toBe(404)
    const badKind = await t.request('DELETE', `${path}/old@example.org?kind=everything`, {
      token: account.token,
    })
    expect(badKind.status).toBe(400)
    const control = await t.request('DELETE', `${path}/old%0A@example.org`, { token: account.token })
    expect(control.status).toBe(400)
    const long = await t.request('DELETE', `${path}/${'a'.repeat(250)}@example.org`, { token: account.token })
    expect(long.status).toBe(400)
    const page = await t.request('GET', `${path}?per_page=101`, { token: account.token })
    expect(page.status).toBe(400)
    // Nothing was lifted by the refusals.
    expect(await isSuppressed('old@example.org', 'digest')).toBe(true)
  })
})
