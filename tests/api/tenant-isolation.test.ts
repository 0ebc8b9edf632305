import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { pgAlertStore } from '../../infrastructure/repositories/pg-alert-store.ts'
import { pgConnectionStore } from '../../infrastructure/repositories/pg-dns-provider-store.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// The tenant-isolation matrix: every authenticated route with no token, a malformed one, an
// unknown one, an expired one, a revoked one, and another account's valid token. The route table
// below must cover every /api/v1 route the app serves, so a new route cannot skip the matrix.

let t: TestApp
let owner: TestAccount
let stranger: TestAccount
let orgId: number
let embedKeyId: string
let alertId: number
let deliveryId: string
let connectionId: string
let ownerKey: string
const tokens: Record<string, string | null> = {}

interface Case {
  method: string
  /** The route as Elysia lists it. */
  route: string
  path: () => string
  body?: () => unknown
  /** What another account's token gets: its own (empty) view or the documented not-found. */
  stranger: { status: number; check?: (body: any) => void }
}

const PUBLIC_LIMIT = '1000'

const cases: Case[] = [
  {
    method: 'GET',
    route: '/api/v1/domains',
    path: () => '/api/v1/domains',
    stranger: { status: 200, check: (body) => expect(body.data).toEqual([]) },
  },
  {
    method: 'POST',
    route: '/api/v1/domains',
    path: () => '/api/v1/domains',
    body: () => ({ domain_name: `s${Date.now()}.example` }),
    stranger: { status: 201 },
  },
  {
    method: 'GET',
    route: '/api/v1/domains/:name',
    path: () => '/api/v1/domains/owned.example',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'PATCH',
    route: '/api/v1/domains/:name',
    path: () => '/api/v1/domains/owned.example',
    body: () => ({ automation_level: 'automatic' }),
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'GET',
    route: '/api/v1/domains/:name/status',
    path: () => '/api/v1/domains/owned.example/status',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'POST',
    route: '/api/v1/domains/:name/verify',
    path: () => '/api/v1/domains/owned.example/verify',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'GET',
    route: '/api/v1/embed-keys',
    path: () => '/api/v1/embed-keys',
    stranger: { status: 200, check: (body) => expect(body.data).toEqual([]) },
  },
  {
    method: 'POST',
    route: '/api/v1/embed-keys',
    path: () => '/api/v1/embed-keys',
    body: () => ({ name: 'Site', allowed_origins: ['https://www.example.net'] }),
    stranger: { status: 201 },
  },
  {
    method: 'DELETE',
    route: '/api/v1/embed-keys/:id',
    path: () => `/api/v1/embed-keys/${embedKeyId}`,
    stranger: { status: 404, check: (body) => expect(body.error).toBe('not_found') },
  },
  {
    method: 'GET',
    route: '/api/v1/domains/:name/reports',
    path: () => '/api/v1/domains/owned.example/reports',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'GET',
    route: '/api/v1/domains/:name/reports/:id',
    path: () => '/api/v1/domains/owned.example/reports/1',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'GET',
    route: '/api/v1/domains/:name/sources',
    path: () => '/api/v1/domains/owned.example/sources',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'GET',
    route: '/api/v1/domains/:name/sources/intelligence',
    path: () => '/api/v1/domains/owned.example/sources/intelligence',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'PATCH',
    route: '/api/v1/domains/:name/sources/:source',
    path: () => '/api/v1/domains/owned.example/sources/192.0.2.1',
    body: () => ({ status: 'legitimate' }),
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'POST',
    route: '/api/v1/domains/:name/simulate',
    path: () => '/api/v1/domains/owned.example/simulate',
    body: () => ({ dmarc_record: 'v=DMARC1; p=reject' }),
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'GET',
    route: '/api/v1/domains/:name/spf',
    path: () => '/api/v1/domains/owned.example/spf',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'POST',
    route: '/api/v1/domains/:name/spf/activate',
    path: () => '/api/v1/domains/owned.example/spf/activate',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'POST',
    route: '/api/v1/domains/:name/spf/detect-sources',
    path: () => '/api/v1/domains/owned.example/spf/detect-sources',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'POST',
    route: '/api/v1/domains/:name/sources/:source/add-to-spf',
    path: () => '/api/v1/domains/owned.example/sources/192.0.2.1/add-to-spf',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'POST',
    route: '/api/v1/domains/:name/spf/publish',
    path: () => '/api/v1/domains/owned.example/spf/publish',
    body: () => ({ dry_run: true }),
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'POST',
    route: '/api/v1/domains/:name/dmarc/host/publish',
    path: () => '/api/v1/domains/owned.example/dmarc/host/publish',
    body: () => ({ dry_run: true }),
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'GET',
    route: '/api/v1/domains/:name/spf/versions',
    path: () => '/api/v1/domains/owned.example/spf/versions',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'POST',
    route: '/api/v1/domains/:name/spf/rollback',
    path: () => '/api/v1/domains/owned.example/spf/rollback',
    body: () => ({ version: 1 }),
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'GET',
    route: '/api/v1/domains/:name/dmarc',
    path: () => '/api/v1/domains/owned.example/dmarc',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'POST',
    route: '/api/v1/domains/:name/dmarc/host',
    path: () => '/api/v1/domains/owned.example/dmarc/host',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'PUT',
    route: '/api/v1/domains/:name/dmarc',
    path: () => '/api/v1/domains/owned.example/dmarc',
    body: () => ({ record: 'v=DMARC1; p=none' }),
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'GET',
    route: '/api/v1/domains/:name/dmarc/progression',
    path: () => '/api/v1/domains/owned.example/dmarc/progression',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'POST',
    route: '/api/v1/domains/:name/dmarc/progression/approve',
    path: () => '/api/v1/domains/owned.example/dmarc/progression/approve',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'POST',
    route: '/api/v1/domains/:name/dmarc/progression/reject',
    path: () => '/api/v1/domains/owned.example/dmarc/progression/reject',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'GET',
    route: '/api/v1/domains/:name/spf/proposals',
    path: () => '/api/v1/domains/owned.example/spf/proposals',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'POST',
    route: '/api/v1/domains/:name/spf/proposals/:id/approve',
    path: () => '/api/v1/domains/owned.example/spf/proposals/1/approve',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'POST',
    route: '/api/v1/domains/:name/spf/proposals/:id/reject',
    path: () => '/api/v1/domains/owned.example/spf/proposals/1/reject',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'POST',
    route: '/api/v1/domains/:name/dmarc/progression/rollback',
    path: () => '/api/v1/domains/owned.example/dmarc/progression/rollback',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'GET',
    route: '/api/v1/dmarc-reports/overview',
    path: () => '/api/v1/dmarc-reports/overview',
    stranger: { status: 200, check: (body) => expect(body.data.totals.messages).toBe(0) },
  },
  {
    method: 'GET',
    route: '/api/v1/dmarc-reports/domains/:domain/summary',
    path: () => '/api/v1/dmarc-reports/domains/owned.example/summary',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'GET',
    route: '/api/v1/dmarc-reports/forensic/reports',
    path: () => '/api/v1/dmarc-reports/forensic/reports',
    stranger: { status: 200, check: (body) => expect(body.data).toEqual([]) },
  },
  {
    method: 'GET',
    route: '/api/v1/dmarc-reports/forensic/reports/:id',
    path: () => '/api/v1/dmarc-reports/forensic/reports/1',
    stranger: { status: 404, check: (body) => expect(body.error).toBe('not_found') },
  },
  {
    method: 'GET',
    route: '/api/v1/domains/:name/tls-reports',
    path: () => '/api/v1/domains/owned.example/tls-reports',
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'GET',
    route: '/api/v1/ingest/address',
    path: () => '/api/v1/ingest/address',
    stranger: { status: 200, check: (body) => expect(body.data.address).not.toContain(ownerKey) },
  },
  {
    method: 'POST',
    route: '/api/v1/ingest/messages',
    path: () => '/api/v1/ingest/messages',
    body: () => 'From: a@b.example\r\nTo: x@y.example\r\nSubject: hi\r\n\r\nhello\r\n',
    // Accepted for the stranger's own account: a token decides the account, whatever the address says.
    stranger: { status: 202 },
  },
  {
    method: 'POST',
    route: '/api/v1/ingest/tls-rpt',
    path: () => '/api/v1/ingest/tls-rpt',
    body: () => '{"organization-name":"x"}',
    stranger: { status: 400 },
  },
  {
    method: 'GET',
    route: '/api/v1/ingest/quarantine',
    path: () => '/api/v1/ingest/quarantine',
    stranger: { status: 200, check: (body) => expect(body.data).toEqual([]) },
  },
  {
    method: 'POST',
    route: '/api/v1/ingest/quarantine/:id/retry',
    path: () => `/api/v1/ingest/quarantine/${crypto.randomUUID()}/retry`,
    stranger: { status: 404, check: (body) => expect(body.error).toBe('not_found') },
  },
  {
    method: 'POST',
    route: '/api/v1/ingest/reports',
    path: () => '/api/v1/ingest/reports',
    body: () =>
      '<?xml version="1.0"?><feedback><report_metadata><org_name>r.example</org_name><report_id>t-1</report_id><date_range><begin>1700000000</begin><end>1700086399</end></date_range></report_metadata><policy_published><domain>elsewhere.example</domain><p>none</p></policy_published><record><row><source_ip>192.0.2.1</source_ip><count>1</count><policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row><identifiers><header_from>elsewhere.example</header_from></identifiers><auth_results></auth_results></record></feedback>',
    // Runs after the quarantine cases (it adds to the stranger's quarantine): a report for a domain
    // of no account of the token's is quarantined there.
    stranger: {
      status: 200,
      check: (body) =>
        expect(body.data).toMatchObject({
          status: 'quarantined',
          quarantine: { code: 'domain_not_in_account' },
        }),
    },
  },
  {
    method: 'GET',
    route: '/api/v1/alerts',
    path: () => '/api/v1/alerts',
    stranger: { status: 200, check: (body) => expect(body.data).toEqual([]) },
  },
  {
    method: 'GET',
    route: '/api/v1/alerts/:alert',
    path: () => `/api/v1/alerts/${alertId}`,
    stranger: { status: 404, check: (body) => expect(body.error).toBe('not_found') },
  },
  {
    method: 'POST',
    route: '/api/v1/alerts/:alert/resolve',
    path: () => `/api/v1/alerts/${alertId}/resolve`,
    stranger: { status: 404, check: (body) => expect(body.error).toBe('not_found') },
  },
  {
    method: 'GET',
    route: '/api/v1/v1/alerts',
    path: () => '/api/v1/v1/alerts',
    stranger: { status: 200, check: (body) => expect(body.data).toEqual([]) },
  },
  {
    method: 'GET',
    route: '/api/v1/v1/alerts/:alert',
    path: () => `/api/v1/v1/alerts/${alertId}`,
    stranger: { status: 404, check: (body) => expect(body.error).toBe('not_found') },
  },
  {
    method: 'POST',
    route: '/api/v1/v1/alerts/:alert/resolve',
    path: () => `/api/v1/v1/alerts/${alertId}/resolve`,
    stranger: { status: 404, check: (body) => expect(body.error).toBe('not_found') },
  },
  {
    method: 'GET',
    route: '/api/v1/webhooks',
    path: () => '/api/v1/webhooks',
    stranger: { status: 200, check: (body) => expect(body.data.url).toBeNull() },
  },
  {
    method: 'PUT',
    route: '/api/v1/webhooks',
    path: () => '/api/v1/webhooks',
    // The stranger turns its own (unset) webhook off: its later cases still see an empty account.
    body: () => ({ url: null }),
    stranger: { status: 200, check: (body) => expect(body.data.url).toBeNull() },
  },
  {
    method: 'POST',
    route: '/api/v1/webhooks/secret/rotate',
    path: () => '/api/v1/webhooks/secret/rotate',
    stranger: { status: 200, check: (body) => expect(body.data.secret).toStartWith('whsec_') },
  },
  {
    method: 'POST',
    route: '/api/v1/webhooks/test',
    path: () => '/api/v1/webhooks/test',
    stranger: { status: 400, check: (body) => expect(body.errors.url).toBeArray() },
  },
  {
    method: 'GET',
    route: '/api/v1/webhooks/deliveries',
    path: () => '/api/v1/webhooks/deliveries',
    stranger: { status: 200, check: (body) => expect(body.data).toEqual([]) },
  },
  {
    method: 'GET',
    route: '/api/v1/webhooks/deliveries/:id',
    path: () => `/api/v1/webhooks/deliveries/${deliveryId}`,
    stranger: { status: 404, check: (body) => expect(body.error).toBe('not_found') },
  },
  {
    method: 'POST',
    route: '/api/v1/webhooks/deliveries/:id/redeliver',
    path: () => `/api/v1/webhooks/deliveries/${deliveryId}/redeliver`,
    stranger: { status: 404, check: (body) => expect(body.error).toBe('not_found') },
  },
  {
    method: 'GET',
    route: '/api/v1/notifications',
    path: () => '/api/v1/notifications',
    // Its own defaults: none of the owner's recipients or Slack channel.
    stranger: {
      status: 200,
      check: (body) => {
        expect(body.data.alert_email.recipients).toEqual([])
        expect(body.data.slack).toMatchObject({ webhook_url: null, last_delivery: null })
      },
    },
  },
  {
    method: 'PUT',
    route: '/api/v1/notifications',
    path: () => '/api/v1/notifications',
    // The stranger turns its own (unset) Slack channel off: the owner's stays (checked below).
    body: () => ({ slack: { webhook_url: null, min_severity: 'low' } }),
    stranger: { status: 200, check: (body) => expect(body.data.slack.webhook_url).toBeNull() },
  },
  {
    method: 'GET',
    route: '/api/v1/notifications/digest/preview',
    path: () => '/api/v1/notifications/digest/preview',
    // The stranger's own digest: none of the owner's domains or alerts.
    stranger: {
      status: 200,
      check: (body) => {
        expect(body).toContain('Weekly digest')
        expect(body).not.toContain('owned.example')
        expect(body).toContain('Open alerts (0)')
      },
    },
  },
  {
    method: 'POST',
    route: '/api/v1/notifications/test',
    path: () => '/api/v1/notifications/test',
    body: () => ({ channel: 'slack' }),
    stranger: { status: 400, check: (body) => expect(body.errors['slack.webhook_url']).toBeArray() },
  },
  {
    method: 'GET',
    route: '/api/v1/notifications/suppressions',
    path: () => '/api/v1/notifications/suppressions',
    stranger: { status: 200, check: (body) => expect(body).toMatchObject({ data: [], meta: { total: 0 } }) },
  },
  {
    method: 'DELETE',
    route: '/api/v1/notifications/suppressions/:address',
    path: () => '/api/v1/notifications/suppressions/owner@owned.example',
    stranger: { status: 404, check: (body) => expect(body.error).toBe('not_found') },
  },
  {
    method: 'POST',
    route: '/api/v1/dns-providers/authenticate',
    path: () => '/api/v1/dns-providers/authenticate',
    // Shape first: without credentials nothing is contacted and nothing stored.
    body: () => ({ provider: 'powerdns', credentials: {} }),
    stranger: { status: 400, check: (body) => expect(body.errors['credentials.api_key']).toBeArray() },
  },
  {
    method: 'GET',
    route: '/api/v1/dns-providers',
    path: () => '/api/v1/dns-providers',
    stranger: { status: 200, check: (body) => expect(body.data).toEqual([]) },
  },
  {
    method: 'DELETE',
    route: '/api/v1/dns-providers/:id',
    path: () => `/api/v1/dns-providers/${connectionId}`,
    stranger: { status: 404, check: (body) => expect(body.error).toBe('not_found') },
  },
  {
    method: 'POST',
    route: '/api/v1/dns-providers/:provider/import-domains',
    path: () => `/api/v1/dns-providers/${connectionId}/import-domains`,
    stranger: { status: 404, check: (body) => expect(body.error).toBe('not_found') },
  },
  {
    method: 'GET',
    route: '/api/v1/dns-providers/imports/:id',
    path: () => `/api/v1/dns-providers/imports/${crypto.randomUUID()}`,
    stranger: { status: 404, check: (body) => expect(body.error).toBe('not_found') },
  },
  {
    method: 'POST',
    route: '/api/v1/dns-providers/writes',
    path: () => '/api/v1/dns-providers/writes',
    body: () => ({ domain: 'owned.example', name: 'owned.example', type: 'TXT', values: ['x'] }),
    stranger: { status: 403, check: (body) => expect(body.error).toBe('domain_not_found') },
  },
  {
    method: 'GET',
    route: '/api/v1/dns-providers/writes',
    path: () => '/api/v1/dns-providers/writes',
    stranger: { status: 200, check: (body) => expect(body.data).toEqual([]) },
  },
  {
    method: 'GET',
    route: '/api/v1/dns-providers/writes/:id',
    path: () => `/api/v1/dns-providers/writes/${crypto.randomUUID()}`,
    stranger: { status: 404, check: (body) => expect(body.error).toBe('not_found') },
  },
  {
    method: 'POST',
    route: '/api/v1/dns-providers/writes/:id/rollback',
    path: () => `/api/v1/dns-providers/writes/${crypto.randomUUID()}/rollback`,
    stranger: { status: 404, check: (body) => expect(body.error).toBe('not_found') },
  },
  {
    method: 'GET',
    route: '/api/v1/organizations',
    path: () => '/api/v1/organizations',
    stranger: { status: 200, check: (body) => expect(body.data).toEqual([]) },
  },
  {
    method: 'POST',
    route: '/api/v1/organizations',
    path: () => '/api/v1/organizations',
    body: () => ({ name: `Org ${Math.random()}` }),
    stranger: { status: 201 },
  },
  {
    method: 'GET',
    route: '/api/v1/organizations/:group',
    path: () => `/api/v1/organizations/${orgId}`,
    stranger: { status: 404, check: (body) => expect(body.error).toBe('not_found') },
  },
  {
    method: 'PATCH',
    route: '/api/v1/organizations/:group',
    path: () => `/api/v1/organizations/${orgId}`,
    body: () => ({ name: 'Taken over' }),
    stranger: { status: 404, check: (body) => expect(body.error).toBe('not_found') },
  },
  {
    method: 'DELETE',
    route: '/api/v1/organizations/:group',
    path: () => `/api/v1/organizations/${orgId}`,
    stranger: { status: 404, check: (body) => expect(body.error).toBe('not_found') },
  },
  {
    method: 'GET',
    route: '/api/v1/organizations/:group/domains',
    path: () => `/api/v1/organizations/${orgId}/domains`,
    stranger: { status: 404, check: (body) => expect(body.error).toBe('not_found') },
  },
]

beforeAll(async () => {
  t = await startTestApp(
    // Every route is called unauthenticated five times: more than the default per-IP limit.
    { RATE_LIMIT_PUBLIC_PER_MINUTE: PUBLIC_LIMIT, RATE_LIMIT_API_PER_MINUTE: '100000' },
    { queue: true },
  )
  owner = await t.account()
  ownerKey = (
    await t.request('GET', '/api/v1/ingest/address', { token: owner.token })
  ).body.data.address.split('@')[0]
  stranger = await t.account()
  await t.request('POST', '/api/v1/domains', { token: owner.token, body: { domain_name: 'owned.example' } })
  const org = await t.request('POST', '/api/v1/organizations', {
    token: owner.token,
    body: { name: 'Owned' },
  })
  orgId = org.body.data.id
  await t.request('PATCH', '/api/v1/domains/owned.example', {
    token: owner.token,
    body: { organization_id: orgId },
  })
  const key = await t.request('POST', '/api/v1/embed-keys', {
    token: owner.token,
    body: { name: 'Owned', allowed_origins: ['https://owned.example'] },
  })
  embedKeyId = key.body.data.id
  const alerts = pgAlertStore(t.db.database.db)
  await alerts.applyPlan(
    owner.accountId,
    null,
    {
      create: [
        {
          type: 'ingest_quarantine_growing',
          subject: '',
          severity: 'medium',
          title: 'Quarantine growing',
          details: { evidence: {}, remedy: 'Look at the quarantine.' },
        },
      ],
      update: [],
      resolve: [],
    },
    new Date(),
  )
  alertId = (await alerts.list(owner.accountId, {}, { page: 1, perPage: 1 })).items[0]!.number
  // The owner has a webhook and one delivery (a test ping) for the stranger to reach for.
  await t.request('PUT', '/api/v1/webhooks', {
    token: owner.token,
    body: { url: 'https://93.184.215.14/owned' },
  })
  deliveryId = (await t.request('POST', '/api/v1/webhooks/test', { token: owner.token })).body.data.id
  // The owner's notification settings: recipients and a Slack channel the stranger must not see.
  await t.request('PUT', '/api/v1/notifications', {
    token: owner.token,
    body: {
      alert_email: { min_severity: 'high', recipients: ['owner@owned.example'] },
      slack: { webhook_url: 'https://93.184.215.14/owned-slack', min_severity: 'high' },
    },
  })
  // An address of the owner's that bounced: the stranger can neither list nor lift it.
  await t.runtime.database.db.execute(
    sql`insert into mail_suppressions (account_id, recipient, kind, reason, detail, at)
      values (${owner.accountId}, 'owner@owned.example', 'all', 'bounced', '550 no such user', now())`,
  )
  // A stored connection of the owner (no provider needs to answer for the stranger's 404s).
  connectionId = (
    await pgConnectionStore(t.db.database.db, { secrets: t.runtime.secrets }).insert(owner.accountId, {
      name: 'Owned DNS',
      settings: { provider: 'powerdns', base_url: 'https://93.184.215.14', server_id: 'localhost' },
      secret: 'owner-key',
      providerAccount: null,
      now: new Date(),
    })
  ).id

  tokens.none = null
  tokens.malformed = 'not-a-token'
  tokens.unknown = `dw_${'a'.repeat(32)}`
  tokens.expired = await t.tokenFor(owner.email, { name: 'short', expiresInDays: 1 })
  tokens.revoked = await t.tokenFor(owner.email, { name: 'leaked' })
  const revoked = await t.request('GET', '/api/v1/domains', { token: tokens.revoked })
  expect(revoked.status).toBe(200)
  const { stores } = await import('../../src/compose.ts')
  const { revokeToken } = await import('../../domain/accounts/use-cases.ts')
  const result = await revokeToken(
    { tokens: stores(t.db.database).tokens },
    { value: tokens.revoked, now: new Date() },
  )
  expect(result.ok).toBe(true)
}, 60_000)
afterAll(() => t.close())

test('the matrix covers every /api/v1 route', () => {
  const served = t.app.routes
    .filter((r) => r.path.startsWith('/api/v1'))
    .map((r) => `${r.method} ${r.path}`)
    .sort()
  expect(cases.map((c) => `${c.method} ${c.route}`).sort()).toEqual(served)
})

describe.each(['none', 'malformed', 'unknown', 'expired', 'revoked'])('with a %s token', (kind) => {
  test.each(cases.map((c) => [`${c.method} ${c.route}`, c] as const))(
    '%s → 401 invalid_token',
    async (_, c) => {
      // The expired token's day has passed by moving the app's clock forward.
      t.clock.now = kind === 'expired' ? new Date(Date.now() + 2 * 86_400_000) : new Date()
      const res = await t.request(c.method, c.path(), { token: tokens[kind], body: c.body?.() })
      t.clock.now = new Date()
      expect(res.status).toBe(401)
      expect(res.body.error).toBe('invalid_token')
      expect(res.body.message).toContain('Settings → API Access')
      expect(res.headers.get('x-ratelimit-limit')).toBe(PUBLIC_LIMIT)
      expect(res.headers.get('x-request-id')).toBeTruthy()
    },
  )
})

describe('with another account’s token', () => {
  test.each(cases.map((c) => [`${c.method} ${c.route}`, c] as const))(
    '%s sees nothing of the owner',
    async (_, c) => {
      const res = await t.request(c.method, c.path(), { token: stranger.token, body: c.body?.() })
      expect(res.status).toBe(c.stranger.status)
      c.stranger.check?.(res.body)
      expect(JSON.stringify(res.body)).not.toContain('owned.example')
    },
  )

  test('the owner’s data is unchanged by the stranger', async () => {
    const res = await t.request('GET', '/api/v1/domains/owned.example', { token: owner.token })
    expect(res.body.data.automation_level).toBe('manual')
    const keys = await t.request('GET', '/api/v1/embed-keys', { token: owner.token })
    expect(keys.body.data.map((k: { id: string }) => k.id)).toEqual([embedKeyId])
    const org = await t.request('GET', `/api/v1/organizations/${orgId}`, { token: owner.token })
    expect(org.body.data).toMatchObject({ name: 'Owned', domain_count: 1 })
    const suppressions = await t.request('GET', '/api/v1/notifications/suppressions', { token: owner.token })
    expect(suppressions.body.data.map((row: { recipient: string }) => row.recipient)).toEqual([
      'owner@owned.example',
    ])
    const notifications = await t.request('GET', '/api/v1/notifications', { token: owner.token })
    expect(notifications.body.data.slack).toMatchObject({
      webhook_url: 'https://93.184.215.14/…lack',
      min_severity: 'high',
    })
  })
})
