import { expect } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { startWorkers } from '../../src/worker.ts'
import { type FormClient, formClient } from '../dashboard/client.ts'
import { type DnsTestServer, startDnsServer } from './dns-server.ts'
import { startTestApp, type TestApp } from './test-app.ts'

// Reports the way they really arrive: through the intake (POST /api/v1/ingest/messages, the
// pg-boss job, the parsers), then read from the database once the job has settled the message.
// And the report pages' world: a loopback DNS server publishing an SPF and a DMARC record for each
// domain, the whole app with its queue and worker, and two accounts signed up and their domains
// added through the dashboard's forms, each with an API token to send reports with.

export const DAY = 86_400

/**
 * A TLS report (RFC 8460 §4.4) of the day from `begin` (seconds) from Company-X: one MTA-STS
 * policy of `domain`, 900 sessions fine and 100 failed on an expired certificate at mx.{domain}.
 */
export function tlsReport(domain: string, id: string, begin: number) {
  const iso = (s: number) => new Date(s * 1000).toISOString().replace('.000', '')
  return {
    'organization-name': 'Company-X',
    'date-range': { 'start-datetime': iso(begin), 'end-datetime': iso(begin + DAY - 1) },
    'contact-info': 'sts-reporting@company-x.example',
    'report-id': id,
    policies: [
      {
        policy: { 'policy-type': 'sts', 'policy-string': ['version: STSv1'], 'policy-domain': domain },
        summary: { 'total-successful-session-count': 900, 'total-failure-session-count': 100 },
        'failure-details': [
          {
            'result-type': 'certificate-expired',
            'receiving-mx-hostname': `mx.${domain}`,
            'failed-session-count': 100,
          },
        ],
      },
    ],
  }
}

export interface Settled {
  status: string
  /** Why the message is in quarantine; null otherwise. */
  code: string | null
}

/**
 * Sends a message to the intake: through app.handle(), or over real HTTP when `origin` names the
 * port the app is served on. Resolves with its id once the job has settled it.
 */
export async function ingestMessage(
  t: TestApp,
  token: string,
  raw: string,
  origin?: string,
): Promise<{ id: string } & Settled> {
  const request = new Request(`${origin ?? 'http://localhost'}/api/v1/ingest/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'message/rfc822' },
    body: raw,
  })
  const response = origin === undefined ? await t.app.handle(request) : await fetch(request)
  expect(response.status).toBe(202)
  const id = ((await response.json()) as { data: { id: string } }).data.id
  return { id, ...(await settledMessage(t, id)) }
}

/** Waits (20 s at most) for the job to process or quarantine the message. */
export async function settledMessage(t: TestApp, id: string): Promise<Settled> {
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const [row] = rowsOf<Settled>(
      await t.db.database.db.execute(
        sql`select status, quarantine_code as code from ingest_messages where id = ${id}`,
      ),
    )
    if (row && row.status !== 'pending') return row
    await Bun.sleep(50)
  }
  throw new Error(`message ${id} was not processed in time`)
}

export interface ReportWorld {
  t: TestApp
  /** Midnight UTC of the app clock's day, in seconds. */
  today: number
  owner: FormClient
  other: FormClient
  ownerAccount: string
  otherAccount: string
  ownerToken: string
  otherToken: string
  ingest(token: string, raw: string): Promise<{ id: string } & Settled>
  settled(id: string): Promise<Settled>
  /** Ownership, proven through DNS in real use: the account's domain `name`, else all its domains. */
  verify(account: string, name?: string): Promise<void>
  /** The id, as text, of the report in `table` whose `column` is `value`. */
  idOf(table: 'aggregate_reports' | 'tls_reports', column: string, value: string): Promise<string>
  close(): Promise<void>
}

interface Signed {
  email: string
  domains: string[]
}

export async function startReportWorld(accounts: { owner: Signed; other: Signed }): Promise<ReportWorld> {
  const names = [...accounts.owner.domains, ...accounts.other.domains]
  const dns: DnsTestServer = await startDnsServer(
    Object.fromEntries(
      names.flatMap((name) => [
        [name, [{ type: 'TXT' as const, data: 'v=spf1 -all' }]],
        [`_dmarc.${name}`, [{ type: 'TXT' as const, data: 'v=DMARC1; p=none' }]],
      ]),
    ),
  )
  let t: TestApp | undefined
  try {
    t = await startTestApp(
      { DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '300', RATE_LIMIT_API_PER_MINUTE: '10000' },
      { queue: true },
    )
    await startWorkers(t.runtime.boss!, t.runtime)
    return await worldOf(t, dns, accounts)
  } catch (error) {
    await t?.close()
    await dns.stop()
    throw error
  }
}

async function worldOf(
  t: TestApp,
  dns: DnsTestServer,
  accounts: { owner: Signed; other: Signed },
): Promise<ReportWorld> {
  const db = () => t.db.database.db

  const accountOf = async (email: string) => {
    const [row] = rowsOf<{ account_id: string }>(
      await db().execute(
        sql`select m.account_id from memberships m join users u on u.id = m.user_id where lower(u.email) = lower(${email})`,
      ),
    )
    return row!.account_id
  }
  const signedUp = async ({ email, domains }: Signed) => {
    const client = formClient(t)
    await client.signUp(email)
    for (const name of domains)
      expect((await client.submit('/domains', { domain_name: name })).status).toBe(303)
    return { client, account: await accountOf(email), token: await t.tokenFor(email) }
  }
  const owner = await signedUp(accounts.owner)
  const other = await signedUp(accounts.other)

  return {
    t,
    today: Math.floor(t.clock.now.getTime() / 1000 / DAY) * DAY,
    owner: owner.client,
    other: other.client,
    ownerAccount: owner.account,
    otherAccount: other.account,
    ownerToken: owner.token,
    otherToken: other.token,
    ingest: (token, raw) => ingestMessage(t, token, raw),
    settled: (id) => settledMessage(t, id),
    async verify(account, name) {
      await db().execute(
        name === undefined
          ? sql`update domains set verified_at = now() where account_id = ${account}`
          : sql`update domains set verified_at = now() where account_id = ${account} and name = ${name}`,
      )
    },
    async idOf(table, column, value) {
      const [row] = rowsOf<{ id: string }>(
        await db().execute(
          sql`select id::text from ${sql.identifier(table)} where ${sql.identifier(column)} = ${value}`,
        ),
      )
      return row!.id
    },
    async close() {
      await t.close()
      await dns.stop()
    },
  }
}
