import { expect } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../infrastructure/db/database.ts'
import type { TestAccount, TestApp } from './test-app.ts'
import { until } from './until.ts'

// What the provider tests do as a user first: connect a PowerDNS (unless the account already has
// it), import a zone through the API and wait for the import job, then set the domain's automation
// level. The domain's id, for seeding its reports.

export async function importPowerDnsZone(
  t: TestApp,
  account: TestAccount,
  input: { baseUrl: string | null; apiKey: string; zone: string; level: string },
): Promise<number> {
  const call = (method: string, path: string, body?: unknown) =>
    t.request(method, `/api/v1${path}`, { token: account.token, body })
  if (input.baseUrl !== null) {
    const connected = await call('POST', '/dns-providers/authenticate', {
      provider: 'powerdns',
      credentials: { base_url: input.baseUrl, api_key: input.apiKey },
    })
    expect(connected.status).toBe(201)
  }
  const started = await call('POST', '/dns-providers/powerdns/import-domains', { zones: [input.zone] })
  const done = await until(
    () => call('GET', `/dns-providers/imports/${started.body.data.id}`).then((r) => r.body.data),
    (i) => i.status === 'done' || i.status === 'failed',
  )
  expect(done.results[0]).toMatchObject({ domain: input.zone, status: 'imported', verified: true })
  const patched = await call('PATCH', `/domains/${input.zone}`, { automation_level: input.level })
  expect(patched.status).toBe(200)
  return Number(
    rowsOf<{ id: string }>(
      await t.db.database.db.execute(
        sql`select id from domains where account_id = ${account.accountId} and name = ${input.zone}`,
      ),
    )[0]!.id,
  )
}

/** A PowerDNS API behind a loopback proxy that answers 503 to the requests `refuse` picks. */
export function flakyProxy(apiUrl: string, refuse: (request: Request) => boolean) {
  return Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const url = new URL(request.url)
      if (refuse(request)) return new Response('{"error":"backend unavailable"}', { status: 503 })
      const body = request.method === 'GET' ? undefined : await request.arrayBuffer()
      return fetch(`${apiUrl}${url.pathname}${url.search}`, {
        method: request.method,
        headers: request.headers,
        body,
      })
    },
  })
}
