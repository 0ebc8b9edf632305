import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { startWorkers } from '../../src/worker.ts'
import { formClient, PASSWORD } from '../dashboard/client.ts'
import { attachment, multipart } from '../infrastructure/mail/mime-builder.ts'
import { type DnsTestServer, startDnsServer } from '../support/dns-server.ts'
import { runCli } from '../support/processes.ts'
import { ingestMessage, settledMessage } from '../support/report-world.ts'
import { reportXml } from '../support/source-reports.ts'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { createTestDatabase, type TestDatabase } from '../support/test-db.ts'

// `bun run cli account create` without a password, `account login-link` and `domain verify`, run
// as processes against the database of an app served in this process: the printed link signs in
// through the dashboard, and a verification from the CLI re-queues the report that waited for it
// (the worker runs here). DNS is a real authoritative server on loopback.

const PUBLIC_URL = 'https://dw.example.org'
let dns: DnsTestServer
let database: TestDatabase
let t: TestApp
let env: Record<string, string>

const db = () => t.db.database.db
const cli = (...args: string[]) => runCli(args, env)
const pathOf = (link: string) => new URL(link).pathname

beforeAll(async () => {
  dns = await startDnsServer({})
  database = await createTestDatabase()
  if (database.url === null)
    throw new Error('the CLI tests need PostgreSQL (another process shares the database)')
  const settings = {
    PUBLIC_URL,
    INGEST_DOMAIN: 'in.example.org',
    DNS_SERVERS: `127.0.0.1:${dns.port}`,
    DNS_TIMEOUT_MS: '300',
  }
  t = await startTestApp({ ...settings, RATE_LIMIT_API_PER_MINUTE: '10000' }, { db: database, queue: true })
  await startWorkers(t.runtime.boss!, t.runtime)
  env = { ...settings, DATABASE_URL: database.url }
}, 60_000)
afterAll(async () => {
  await t.close()
  await database.drop()
  await dns.stop()
})

describe('sign-in links', () => {
  test('account create without a password prints a one-time link that signs in and asks for a password', async () => {
    const created = await cli('account', 'create', '--email', 'first@example.org')
    expect(created.code).toBe(0)
    const account = JSON.parse(created.stdout)
    expect(account.sign_in_link).toMatch(/^https:\/\/dw\.example\.org\/login-link\/[A-Za-z0-9_-]{43}$/)
    const expires = Date.parse(account.sign_in_link_expires_at)
    expect(Math.abs(expires - (Date.now() + 24 * 3_600_000))).toBeLessThan(60_000)
    // Hashed at rest: the token is nowhere in the table.
    const token = account.sign_in_link.split('/').pop()
    const stored = rowsOf<{ token_hash: string }>(await db().execute(sql`select token_hash from login_links`))
    expect(stored).toHaveLength(1)
    expect(stored[0]!.token_hash).not.toContain(token)

    const browser = formClient(t)
    // Looking at the link (a mail scanner, a preview) spends nothing.
    expect((await browser.get(pathOf(account.sign_in_link))).status).toBe(200)
    const signedIn = await browser.submit(pathOf(account.sign_in_link), {})
    expect(signedIn.status).toBe(303)
    expect(signedIn.location).toBe('/settings/password?welcome=1')
    const prompt = await browser.get('/settings/password?welcome=1')
    expect(prompt.html).toContain('Your account has no password yet')
    const set = await browser.submit('/settings/password', { password: PASSWORD })
    expect(set.location).toBe('/domains?password_set=1')
    expect((await browser.get('/domains?password_set=1')).html).toContain('Your password is set')

    // Used once: the link is dead, and the password now works on its own.
    expect((await formClient(t).get(pathOf(account.sign_in_link))).status).toBe(400)
    const replay = await formClient(t).submit('/login', {}, pathOf(account.sign_in_link))
    expect(replay.status).toBe(400)
    expect(replay.setCookies.some((c) => c.includes('dw_session='))).toBe(false)
    expect((await formClient(t).logIn('first@example.org')).location).toBe('/domains')
    // With a password, the page of first passwords sends the user to the account settings.
    expect((await browser.get('/settings/password')).location).toBe('/settings/account')
  })

  test('account login-link makes a new link and voids the older one; links expire after 24 hours', async () => {
    const created = JSON.parse((await cli('account', 'create', '--email', 'second@example.org')).stdout)
    const renewed = await cli('account', 'login-link', '--email', 'second@example.org')
    expect(renewed.code).toBe(0)
    const link = renewed.stdout.trim()
    expect(link).toStartWith(`${PUBLIC_URL}/login-link/`)
    expect((await formClient(t).get(pathOf(created.sign_in_link))).status).toBe(400)

    t.clock.now = new Date(Date.now() + 25 * 3_600_000)
    try {
      expect((await formClient(t).get(pathOf(link))).status).toBe(400)
    } finally {
      t.clock.now = new Date()
    }
    const browser = formClient(t)
    const signedIn = await browser.submit(pathOf(link), {})
    expect(signedIn.location).toBe('/settings/password?welcome=1')
    expect((await browser.get('/domains')).status).toBe(200)

    const nobody = await cli('account', 'login-link', '--email', 'nobody@example.org')
    expect(nobody.code).toBe(1)
    expect(nobody.stderr.trim()).toBe(
      'no user with that e-mail: check --email, or create one with `bun run cli account create --email …`',
    )
  })

  test('account create with a password prints no link', async () => {
    const created = await runCli(
      ['account', 'create', '--email', 'third@example.org', '--password-stdin'],
      env,
      `${PASSWORD}\n`,
    )
    expect(created.code).toBe(0)
    expect(JSON.parse(created.stdout).sign_in_link).toBeUndefined()
  })
})

describe('domain verify', () => {
  let token: string
  let address: string

  beforeAll(async () => {
    await cli('account', 'create', '--email', 'owner@example.org')
    token = await t.tokenFor('owner@example.org')
    address = (await t.request('GET', '/api/v1/ingest/address', { token })).body.data.address
    for (const name of ['cli.example', 'trusted.example']) {
      const res = await t.request('POST', '/api/v1/domains', { token, body: { domain_name: name } })
      expect(res.status).toBe(201)
    }
  })

  test('by the DMARC record: refused without a proof, then verified, and the waiting report is processed', async () => {
    const xml = reportXml('cli.example', 'receiver.example', 'cli-1', Math.floor(Date.now() / 1000), [
      { ip: '192.0.2.7', count: 2 },
    ])
    const mail = multipart([attachment('application/xml', 'cli-1.xml', new TextEncoder().encode(xml))])
    const held = await ingestMessage(t, token, mail)
    expect(held.code).toBe('domain_not_verified')

    const refused = await cli('domain', 'verify', '--email', 'owner@example.org', '--domain', 'cli.example')
    expect(refused.code).toBe(1)
    expect(refused.stderr).toStartWith('not verified: No TXT record at _dmarcwatch.cli.example.')

    dns.set('_dmarc.cli.example', 'TXT', [{ data: `v=DMARC1; p=none; rua=mailto:${address}` }])
    const verified = await cli('domain', 'verify', '--email', 'owner@example.org', '--domain', 'CLI.example')
    expect(verified.code).toBe(0)
    expect(JSON.parse(verified.stdout)).toMatchObject({
      domain: 'cli.example',
      verified: true,
      proof: 'dmarc_rua',
      requeued: 1,
    })
    expect(await settledMessage(t, held.id)).toEqual({ status: 'processed', code: null })
  })

  test('--without-dns trusts the operator, who must say why; the reason is recorded', async () => {
    const args = ['domain', 'verify', '--email', 'owner@example.org', '--domain', 'trusted.example']
    // Options missing or given without theirs are usage errors (2, README "CLI").
    const bare = await cli(...args, '--without-dns')
    expect(bare.code).toBe(2)
    expect(bare.stderr.trim()).toBe('--reason is required')
    const stray = await cli(...args, '--reason', 'because')
    expect(stray.code).toBe(2)
    const twoLines = await cli(...args, '--without-dns', '--reason', 'one\ntwo')
    expect(twoLines.code).toBe(1)
    expect(twoLines.stderr.trim()).toBe('The reason is one line of at most 500 characters.')

    const trusted = await cli(...args, '--without-dns', '--reason', 'internal zone, no public DNS')
    expect(trusted.code).toBe(0)
    expect(JSON.parse(trusted.stdout)).toMatchObject({
      verified: true,
      proof: 'operator',
      reason: 'internal zone, no public DNS',
    })
    const [row] = rowsOf<{ by: string; reason: string }>(
      await db().execute(
        sql`select verified_by as by, verified_reason as reason from domains where name = 'trusted.example'`,
      ),
    )
    expect(row).toEqual({ by: 'operator', reason: 'internal zone, no public DNS' })
    const events = rowsOf<{ n: number }>(
      await db().execute(
        sql`select count(*)::int as n from events where type = 'domain.verified' and data->>'domain' = 'trusted.example'`,
      ),
    )
    expect(events[0]!.n).toBe(1)

    const elsewhere = await cli(
      'domain',
      'verify',
      '--email',
      'owner@example.org',
      '--domain',
      'none.example',
    )
    expect(elsewhere.code).toBe(1)
    expect(elsewhere.stderr.trim()).toBe('no such domain in the account')
  })
})
