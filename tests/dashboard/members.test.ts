import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { csrfOf, type FormClient, formClient } from './client.ts'
import { type SmtpSink, startSmtpSink } from './smtp-sink.ts'

// Settings → Account members and invitations, end to end: the pages through the cookie-jar
// client, the invitation mails through a local SMTP server, PostgreSQL behind them.

const DAY = 86_400_000
let t: TestApp
let smtp: SmtpSink
beforeAll(async () => {
  smtp = await startSmtpSink()
  t = await startTestApp({
    MAIL_SMTP_URL: smtp.url,
    MAIL_FROM: 'dmarcwatch <noreply@dmarc.example.org>',
    RATE_LIMIT_LOGIN_PER_MINUTE: '1000',
    RATE_LIMIT_PUBLIC_PER_MINUTE: '1000',
  })
}, 60_000)
afterAll(async () => {
  await t.close()
  await smtp.stop()
})

const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`

async function user(name: string): Promise<{ email: string; client: FormClient }> {
  const email = unique(name)
  const client = formClient(t)
  expect((await client.signUp(email)).status).toBe(303)
  return { email, client }
}

const accountPage = async (client: FormClient) => (await client.get('/settings/account')).html

/** Posts a form of the account page with the session's CSRF token. */
async function act(client: FormClient, action: string, fields: Record<string, string> = {}) {
  return client.post(action, { _csrf: csrfOf(await accountPage(client)), ...fields })
}

async function invite(owner: FormClient, email: string, role = 'member') {
  return act(owner, '/settings/account/invitations', { email, role })
}

/** Invites and returns the link path from the mail. */
async function invited(owner: FormClient, email: string, role = 'member'): Promise<string> {
  const sent = await invite(owner, email, role)
  expect(sent.status).toBe(303)
  const mail = await smtp.next(email.toLowerCase())
  const match = new RegExp(`${t.config.publicUrl}(/invitations/[A-Za-z0-9_-]{43})`).exec(mail.text)
  if (!match) throw new Error(`no invitation link in:\n${mail.text}`)
  return match[1]!
}

async function join(client: FormClient, link: string) {
  const page = await client.get(link)
  return client.post(link, { _csrf: csrfOf(page.html) })
}

/** The table row of `email` in a page (members or invitations). */
function rowOf(html: string, email: string): string {
  const row = html.split('<tr').find((part) => part.includes(`${email}`) && part.includes('scope="row"'))
  if (row === undefined) throw new Error(`no row for ${email}`)
  return row
}

const memberIdOf = (html: string, email: string) =>
  /\/settings\/account\/members\/([0-9a-f-]{36})\/remove/.exec(rowOf(html, email))?.[1] ?? null

const invitationIdOf = (html: string, email: string) =>
  /\/settings\/account\/invitations\/([0-9a-f-]{36})\/revoke/.exec(rowOf(html, email))?.[1] ?? null

function switcherOptions(html: string): { id: string; label: string }[] {
  const select = /<select id="account_id" name="account_id">([\s\S]*?)<\/select>/.exec(html)?.[1] ?? ''
  return [...select.matchAll(/<option value="([^"]+)"[^>]*>([^<]*)<\/option>/g)].map((m) => ({
    id: m[1]!,
    label: m[2]!,
  }))
}

/** The members table of the account page (without the invitations). */
const membersOf = (html: string) => html.slice(html.indexOf('id="members"'), html.indexOf('id="invitations"'))

describe('inviting and joining', () => {
  test('invite → mail → log in → join: the member is listed and their session is in the account', async () => {
    const ann = await user('ann')
    const bob = await user('bob')
    const link = await invited(ann.client, bob.email.toUpperCase())
    const mail = smtp.mails.at(-1)!
    expect(mail.from).toBe('noreply@dmarc.example.org')
    expect(mail.subject).toBe(`${ann.email} invited you to dmarcwatch`)
    expect(mail.text).toContain(`the account of ${ann.email}`)
    expect(mail.text).toContain(`as ${bob.email}`)

    const annPage = (await ann.client.get('/settings/account?invited=1')).html
    expect(annPage).toContain('Invitation sent')
    expect(rowOf(annPage, bob.email)).toContain('Member')
    expect(invitationIdOf(annPage, bob.email)).not.toBeNull()

    // Logged out: the page names the invitation and sends to login with next.
    const visitor = formClient(t)
    const out = await visitor.get(link)
    expect(out.status).toBe(200)
    expect(out.html).toContain(`Join the account of ${ann.email}`)
    expect(out.html).toContain(`href="/login?next=${encodeURIComponent(link)}"`)
    const loginPage = await visitor.get(`/login?next=${encodeURIComponent(link)}`)
    const loggedIn = await visitor.post('/login', {
      _csrf: csrfOf(loginPage.html),
      email: bob.email,
      password: 'correct horse battery staple',
      next: link,
    })
    expect(loggedIn.location).toBe(link)

    const page = await visitor.get(link)
    expect(page.status).toBe(200)
    expect(page.html).toContain(`Join ${ann.email}</button>`)
    const joined = await visitor.post(link, { _csrf: csrfOf(page.html) })
    expect(joined.status).toBe(303)
    expect(joined.location).toBe('/settings/account?joined=1')

    const bobPage = await visitor.get(joined.location!)
    expect(bobPage.html).toContain('You joined this account.')
    expect(bobPage.html).toContain(`You are in the account of <strong>${ann.email}</strong>`)
    expect(rowOf(bobPage.html, bob.email)).toContain('(you)')
    expect(rowOf(bobPage.html, ann.email)).toContain('Owner')

    const after = await accountPage(ann.client)
    expect(rowOf(membersOf(after), bob.email)).toContain('Member')
    expect(after).not.toContain('Revoke the invitation of')
    // Single use.
    const again = await visitor.get(link)
    expect(again.status).toBe(410)
    expect(again.html).toContain('already used')

    // A token made in Settings → API now belongs to Ann's account, not to Bob's own.
    const apiPage = await visitor.get('/settings/api')
    const made = await visitor.post('/settings/api/tokens', {
      _csrf: csrfOf(apiPage.html),
      name: 'bob-in-ann',
    })
    expect(made.status).toBe(200)
    expect((await ann.client.get('/settings/api')).html).toContain('bob-in-ann')
    expect((await bob.client.get('/settings/api')).html).not.toContain('bob-in-ann')

    // A fresh login still opens Bob's oldest account, his own.
    const fresh = formClient(t)
    await fresh.logIn(bob.email)
    expect(await accountPage(fresh)).toContain(`You are in the account of <strong>${bob.email}</strong>`)
  })

  test('another user is refused, and the link still works for the invited one', async () => {
    const ann = await user('ann')
    const eve = await user('eve')
    const dan = await user('dan')
    const link = await invited(ann.client, dan.email, 'owner')
    const seen = await eve.client.get(link)
    expect(seen.status).toBe(403)
    expect(seen.html).toContain('This invitation is for someone else')
    expect(seen.html).toContain(dan.email)
    expect(seen.html).not.toContain('Join ')
    const forced = await eve.client.post(link, { _csrf: csrfOf(seen.html) })
    expect(forced.status).toBe(403)
    expect(membersOf(await accountPage(ann.client))).not.toContain(eve.email)

    // Joining needs the session's CSRF token.
    expect((await dan.client.post(link, {})).status).toBe(403)
    const joined = await join(dan.client, link)
    expect(joined.location).toBe('/settings/account?joined=1')
    expect(rowOf(membersOf(await accountPage(ann.client)), dan.email)).toContain('Owner')
  })

  test('expired, revoked, replaced and made-up links get a clear page, never a 500', async () => {
    const ann = await user('ann')
    const dan = await user('dan')

    const first = await invited(ann.client, dan.email)
    const second = await invited(ann.client, dan.email)
    const replaced = await dan.client.get(first)
    expect(replaced.status).toBe(410)
    expect(replaced.html).toContain('was revoked')

    const id = invitationIdOf(await accountPage(ann.client), dan.email)!
    const revoked = await act(ann.client, `/settings/account/invitations/${id}/revoke`)
    expect(revoked.location).toBe('/settings/account?invitation_revoked=1#invitations')
    for (const client of [dan.client, formClient(t)]) {
      const page = await client.get(second)
      expect(page.status).toBe(410)
      expect(page.html).toContain('was revoked')
    }
    expect((await dan.client.post(second, { _csrf: await dan.client.csrf() })).status).toBe(410)

    const third = await invited(ann.client, dan.email)
    const start = t.clock.now
    t.clock.now = new Date(start.getTime() + 7 * DAY + 1000)
    try {
      const expired = await dan.client.get(third)
      expect(expired.status).toBe(410)
      expect(expired.html).toContain('has expired')
      expect((await join(dan.client, third)).status).toBe(410)
      // An expired invitation stays listed as expired until revoked or replaced.
      expect(rowOf(await accountPage(ann.client), dan.email)).toContain('expired')
    } finally {
      t.clock.now = start
    }

    for (const bad of ['/invitations/nope', `/invitations/${'A'.repeat(43)}`, '/invitations/%E0%A4%A']) {
      const page = await formClient(t).get(bad)
      expect(page.status).toBe(404)
      expect(page.html).toContain('not valid')
    }
    expect(membersOf(await accountPage(ann.client))).not.toContain(dan.email)
  })

  test('inviting a member again, a bad address or a bad role is refused at the field', async () => {
    const ann = await user('ann')
    const self = await invite(ann.client, ann.email)
    expect(self.status).toBe(400)
    expect(self.html).toContain('is already a member of this account')
    const bad = await invite(ann.client, 'not-an-address')
    expect(bad.status).toBe(400)
    expect(bad.html).toContain('aria-invalid="true"')
    expect((await invite(ann.client, unique('x'), 'admin')).status).toBe(400)
  })

  test('invitation mails are limited per address', async () => {
    const ann = await user('ann')
    const target = unique('flood')
    for (let i = 0; i < 5; i++) expect((await invite(ann.client, target)).status).toBe(303)
    const refused = await invite(ann.client, target)
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    for (let i = 0; i < 5; i++) await smtp.next(target)
  })
})

describe('owners and members', () => {
  async function team() {
    const ann = await user('ann')
    const bob = await user('bob')
    await join(bob.client, await invited(ann.client, bob.email))
    const annPage = await accountPage(ann.client)
    return { ann, bob, annId: memberIdOf(annPage, ann.email), bobId: memberIdOf(annPage, bob.email)! }
  }

  test('a member sees the list but no controls, and every owner action is refused', async () => {
    const { ann, bob, bobId } = await team()
    const pending = unique('pending')
    await invited(ann.client, pending)

    const page = await accountPage(bob.client)
    expect(membersOf(page)).toContain(ann.email)
    expect(page).toContain(pending)
    expect(page).not.toContain('Send invitation')
    expect(page).not.toContain('/settings/account/members/')
    expect(page).not.toContain('Revoke the invitation')
    expect(page).toContain('Only owners invite and remove members.')

    const annRow = await userIdOf(ann.email)
    const invitationId = invitationIdOf(await accountPage(ann.client), pending)!
    const refusals = [
      await invite(bob.client, unique('sneaky')),
      await act(bob.client, `/settings/account/invitations/${invitationId}/revoke`),
      await act(bob.client, `/settings/account/members/${annRow}/remove`),
      await act(bob.client, `/settings/account/members/${bobId}/role`, { role: 'owner' }),
    ]
    for (const refused of refusals) expect(refused.status).toBe(403)
    const annPage = await accountPage(ann.client)
    expect(rowOf(annPage, pending)).toContain('Revoke')
    expect(rowOf(membersOf(annPage), bob.email)).toContain('Member')
  })

  test('the last owner can be neither removed nor demoted; with two owners either may go', async () => {
    const { ann, bob, bobId, annId } = await team()
    // Ann is the only owner: her row has no controls, and posting them anyway is refused.
    expect(rowOf(await accountPage(ann.client), ann.email)).toContain('The only owner')
    expect(annId).toBeNull()
    const annUserId = await userIdOf(ann.email)
    const removeSelf = await act(ann.client, `/settings/account/members/${annUserId}/remove`)
    expect(removeSelf.status).toBe(400)
    expect(removeSelf.html).toContain('An account keeps at least one owner')
    const demoteSelf = await act(ann.client, `/settings/account/members/${annUserId}/role`, {
      role: 'member',
    })
    expect(demoteSelf.status).toBe(400)

    // Bob becomes an owner; then Ann may step down, and Bob is the last owner in turn.
    const promoted = await act(ann.client, `/settings/account/members/${bobId}/role`, { role: 'owner' })
    expect(promoted.location).toBe('/settings/account?role=1#members')
    expect(
      (await act(ann.client, `/settings/account/members/${annUserId}/role`, { role: 'member' })).status,
    ).toBe(303)
    expect(rowOf(await accountPage(bob.client), bob.email)).toContain('The only owner')
    expect((await act(bob.client, `/settings/account/members/${bobId}/remove`)).status).toBe(400)
    expect(
      (await act(ann.client, `/settings/account/members/${bobId}/role`, { role: 'member' })).status,
    ).toBe(403)
  })

  test('removing a member ends their sessions in the account and revokes their tokens there', async () => {
    const { ann, bob, bobId } = await team()
    // Bob's other session stays in his own account.
    const own = formClient(t)
    await own.logIn(bob.email)
    const apiPage = await bob.client.get('/settings/api')
    const made = await bob.client.post('/settings/api/tokens', {
      _csrf: csrfOf(apiPage.html),
      name: 'bob-token',
    })
    const token = /id="token-value">([^<]+)</.exec(made.html)![1]!
    expect((await t.request('GET', '/api/v1/domains', { token })).status).toBe(200)

    const removed = await act(ann.client, `/settings/account/members/${bobId}/remove`)
    expect(removed.location).toBe('/settings/account?removed=1#members')
    expect(membersOf(await accountPage(ann.client))).not.toContain(bob.email)
    expect((await bob.client.get('/domains')).location).toBe('/login')
    expect((await t.request('GET', '/api/v1/domains', { token })).status).toBe(401)
    expect((await own.get('/settings/account')).status).toBe(200)
    // Another account's member id is not found in Ann's account.
    expect((await act(ann.client, `/settings/account/members/${bobId}/remove`)).status).toBe(404)
    expect((await act(ann.client, '/settings/account/members/not-a-uuid/remove')).status).toBe(404)
  })

  test('an owner who leaves (another owner remains) is logged out of the account', async () => {
    const ann = await user('ann')
    const cat = await user('cat')
    await join(cat.client, await invited(ann.client, cat.email, 'owner'))
    const catId = await userIdOf(cat.email)
    const left = await act(cat.client, `/settings/account/members/${catId}/remove`)
    expect(left.location).toBe('/login?logged_out=1')
    expect(membersOf(await accountPage(ann.client))).not.toContain(cat.email)
    // Cat still has her own account to log in to.
    const again = formClient(t)
    expect((await again.logIn(cat.email)).status).toBe(303)
  })
})

test('a user removed from their only account is deleted, so the address can sign up again', async () => {
  const ann = await user('ann')
  const cat = await user('cat')
  await join(cat.client, await invited(ann.client, cat.email, 'owner'))
  const annId = await userIdOf(ann.email)
  // Cat, now an owner of Ann's account, removes Ann: Ann has no account left.
  expect((await act(cat.client, `/settings/account/members/${annId}/remove`)).status).toBe(303)
  expect((await ann.client.get('/domains')).location).toBe('/login')
  expect(await query('select 1 from users where id = $1', [annId])).toEqual([])
  expect((await formClient(t).logIn(ann.email)).status).toBe(400)
  expect((await formClient(t).signUp(ann.email)).status).toBe(303)
})

test('two owners demoting each other at once leave one owner', async () => {
  const ann = await user('ann')
  const bob = await user('bob')
  await join(bob.client, await invited(ann.client, bob.email, 'owner'))
  const [annId, bobId] = [await userIdOf(ann.email), await userIdOf(bob.email)]
  const [annCsrf, bobCsrf] = [await ann.client.csrf(), await bob.client.csrf()]
  const answers = await Promise.all([
    ann.client.post(`/settings/account/members/${bobId}/role`, { _csrf: annCsrf, role: 'member' }),
    bob.client.post(`/settings/account/members/${annId}/role`, { _csrf: bobCsrf, role: 'member' }),
  ])
  // Serialised by the lock: the second finds its actor already demoted (403), never zero owners.
  expect(answers.map((a) => a.status).sort()).toEqual([303, 403])
  const members = membersOf(await accountPage(ann.client))
  expect(members.match(/class="badge ok">Owner</g)).toHaveLength(1)
})

describe('the account switcher and isolation', () => {
  test('the switcher offers only the user’s accounts and moves the session between them', async () => {
    const ann = await user('ann')
    const bob = await user('bob')
    const zed = await user('zed')
    await join(bob.client, await invited(ann.client, bob.email))

    const options = switcherOptions(await accountPage(bob.client))
    expect(options.map((o) => o.label).sort()).toEqual(
      [`${ann.email} (member)`, `${bob.email} (owner)`].sort(),
    )
    const own = options.find((o) => o.label.startsWith(bob.email))!
    const anns = options.find((o) => o.label.startsWith(ann.email))!
    // Zed's single account: no switcher form.
    expect(switcherOptions(await accountPage(zed.client))).toEqual([])
    expect(await accountPage(zed.client)).toContain('You belong to this account only')

    const zedAccount = await accountIdOf(zed.email)
    const foreign = await act(bob.client, '/settings/account/switch', { account_id: zedAccount })
    expect(foreign.status).toBe(404)
    expect((await act(bob.client, '/settings/account/switch', { account_id: 'junk' })).status).toBe(404)
    expect(await accountPage(bob.client)).toContain(`You are in the account of <strong>${ann.email}</strong>`)

    const switched = await act(bob.client, '/settings/account/switch', { account_id: own.id })
    expect(switched.location).toBe('/domains')
    expect(await accountPage(bob.client)).toContain(`You are in the account of <strong>${bob.email}</strong>`)
    // Without the CSRF token the switch is refused.
    expect((await bob.client.post('/settings/account/switch', { account_id: anns.id })).status).toBe(403)
    expect((await act(bob.client, '/settings/account/switch', { account_id: anns.id })).location).toBe(
      '/domains',
    )
    expect(await accountPage(bob.client)).toContain(`You are in the account of <strong>${ann.email}</strong>`)
  })

  test('another account’s invitations are invisible and cannot be revoked from there', async () => {
    const ann = await user('ann')
    const zed = await user('zed')
    const target = unique('target')
    await invited(ann.client, target)
    const id = invitationIdOf(await accountPage(ann.client), target)!
    expect(await accountPage(zed.client)).not.toContain(target)
    const attempt = await act(zed.client, `/settings/account/invitations/${id}/revoke`)
    expect(attempt.status).toBe(404)
    expect((await act(zed.client, '/settings/account/invitations/not-a-uuid/revoke')).status).toBe(404)
    expect(rowOf(await accountPage(ann.client), target)).toContain('Revoke')
  })
})

async function userIdOf(email: string): Promise<string> {
  const rows = await query<{ id: string }>(`select id from users where lower(email) = lower($1)`, [email])
  return rows[0]!.id
}

async function accountIdOf(email: string): Promise<string> {
  const rows = await query<{ account_id: string }>(
    `select m.account_id from memberships m join users u on u.id = m.user_id
     where lower(u.email) = lower($1) order by m.created_at limit 1`,
    [email],
  )
  return rows[0]!.account_id
}

async function query<T>(text: string, params: unknown[]): Promise<T[]> {
  const database = t.db.database
  if (database.kind === 'postgres')
    return (await database.client.unsafe(text, params as never[])) as unknown as T[]
  return (await database.pglite.query<T>(text, params)).rows
}
