import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { and, eq } from 'drizzle-orm'
import { evaluatePosture } from '../../domain/alerts/evaluation.ts'
import { domains } from '../../infrastructure/db/schema/domains.ts'
import { notificationDeliveries } from '../../infrastructure/db/schema/notifications.ts'
import { registerJobs } from '../../infrastructure/queue/handlers.ts'
import { appendEvent } from '../../infrastructure/repositories/pg-event-outbox.ts'
import { alertEvaluationDeps } from '../../src/compose/alerts.ts'
import { chatDeliveryDeps } from '../../src/compose/notifications.ts'
import { processStores, stores } from '../../src/compose/stores.ts'
import { webhookJobDeps } from '../../src/compose/webhooks.ts'
import { notificationJobs } from '../../src/jobs/notifications.ts'
import { registerWebhookJobs } from '../../src/jobs/webhooks.ts'
import { type ChatReceiver, startSlackReceiver, startTeamsReceiver } from '../support/chat-receivers.ts'
import { type DnsTestServer, startDnsServer } from '../support/dns-server.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'
import { until } from '../support/until.ts'

// Slack and Teams messages end to end (docs/notifications.md, "Chat messages"): an alert opened by a
// real posture check against a DNS server on loopback, the outbox relay and the chat job on pg-boss,
// and loopback receivers that hold each message to the Slack and Teams shapes; the test message;
// failures recorded, retried on the webhook schedule (the 5 s retry in real time), and shown.

const PUBLIC_URL = 'https://dmarc.example.test'
let t: TestApp
let dns: DnsTestServer
const receivers: ChatReceiver[] = []
const boss = () => t.runtime.boss!
const db = () => t.db.database.db

const api = (method: string, path: string, account: TestAccount, body?: unknown) =>
  t.request(method, `/api/v1${path}`, { token: account.token, body })

function receiversFor() {
  const slack = startSlackReceiver()
  const teams = startTeamsReceiver()
  receivers.push(slack, teams)
  return { slack, teams }
}

async function connected(slackMin = 'high', teamsMin = 'high') {
  const account = await t.account()
  const { slack, teams } = receiversFor()
  const saved = await api('PUT', '/notifications', account, {
    slack: { webhook_url: slack.url, min_severity: slackMin },
    teams: { webhook_url: teams.url, min_severity: teamsMin },
  })
  expect(saved.status).toBe(200)
  return { account, slack, teams }
}

const deliveriesOf = (accountId: string) =>
  db().select().from(notificationDeliveries).where(eq(notificationDeliveries.accountId, accountId))

beforeAll(async () => {
  dns = await startDnsServer({
    'chatty.example': [{ type: 'TXT', data: 'v=spf1 -all' }],
  })
  t = await startTestApp(
    {
      WEBHOOK_ALLOW_PRIVATE: '1',
      RATE_LIMIT_API_PER_MINUTE: '10000',
      DNS_SERVERS: `127.0.0.1:${dns.port}`,
      DNS_TIMEOUT_MS: '300',
      PUBLIC_URL,
    },
    { queue: true },
  )
  Object.defineProperty(t.clock, 'now', { get: () => new Date() })
  const s = processStores({ ...t.runtime, boss: boss() })
  await registerWebhookJobs(boss(), webhookJobDeps(t.runtime, boss()))
  await registerJobs(boss(), notificationJobs(chatDeliveryDeps(t.runtime, s.notificationSettings, boss())))
}, 60_000)
afterAll(async () => {
  await t.close()
  for (const receiver of receivers) await receiver.stop()
  await dns.stop()
})

describe('alert messages', () => {
  test('an alert created by a posture check, then resolved, reaches Slack and Teams in their shapes', async () => {
    const { account, slack, teams } = await connected()
    expect((await api('POST', '/domains', account, { domain_name: 'chatty.example' })).status).toBe(201)
    expect((await api('GET', '/domains/chatty.example/status?refresh=1', account)).status).toBe(200)
    const [row] = await db()
      .select({ id: domains.id })
      .from(domains)
      .where(and(eq(domains.accountId, account.accountId), eq(domains.name, 'chatty.example')))
    const deps = alertEvaluationDeps(stores(t.runtime.database), t.runtime)
    await evaluatePosture(deps, { accountId: account.accountId, domainId: row!.id })
    const alert = (await api('GET', '/alerts?type=dmarc_missing', account)).body.data[0]
    expect(alert).toMatchObject({ severity: 'critical', domain: 'chatty.example' })
    const link = `${PUBLIC_URL}/alerts/${alert.alert_id}`

    // The check opens other alerts too (no DKIM key found): the messages are told apart by their link.
    const slackFor = (headline: string) =>
      until(
        async () =>
          slack.arrivals.find(
            (a) =>
              a.body?.blocks?.[2]?.elements?.[0]?.url === link && a.body.blocks[0].text.text === headline,
          ),
        (a) => a !== undefined,
      )
    const teamsFor = (headline: string) =>
      until(
        async () =>
          teams.arrivals.find(
            (a) =>
              a.body?.attachments?.[0]?.content?.actions?.[0]?.url === link &&
              a.body.attachments[0].content.body[0].text === headline,
          ),
        (a) => a !== undefined,
      )
    const toSlack = await slackFor('New alert')
    expect(toSlack!.problems).toEqual([])
    expect(toSlack!.body.text).toContain('[CRITICAL] chatty.example')
    expect(toSlack!.body.text).toContain(alert.title)
    expect(toSlack!.body.blocks.map((b: any) => b.type)).toEqual(['header', 'section', 'actions', 'context'])
    expect(toSlack!.body.blocks[0].text.text).toBe('New alert')
    expect(toSlack!.body.blocks[1].fields.map((f: any) => f.text)).toEqual([
      '*Severity*\ncritical',
      '*Domain*\nchatty.example',
    ])
    expect(toSlack!.body.blocks[2].elements[0].url).toBe(link)

    const toTeams = await teamsFor('New alert')
    expect(toTeams!.problems).toEqual([])
    const card = toTeams!.body.attachments[0].content
    expect(card).toMatchObject({ type: 'AdaptiveCard', version: '1.4' })
    expect(card.body[0].text).toBe('New alert')
    expect(card.body[1].text).toBe(alert.title)
    expect(card.body[2].facts).toEqual([
      { title: 'Severity', value: 'critical' },
      { title: 'Domain', value: 'chatty.example' },
    ])
    expect(card.actions[0]).toEqual({ type: 'Action.OpenUrl', title: 'Open alert', url: link })

    expect((await api('POST', `/alerts/${alert.alert_id}/resolve`, account)).status).toBe(200)
    const resolvedSlack = await slackFor('Alert resolved')
    expect(resolvedSlack!.problems).toEqual([])
    const resolvedTeams = await teamsFor('Alert resolved')
    expect(resolvedTeams!.problems).toEqual([])
    expect(resolvedTeams!.body.attachments[0].content.body[0].color).toBe('Good')
    // Every message of the burst had the documented shape.
    expect([...slack.arrivals, ...teams.arrivals].flatMap((a) => a.problems)).toEqual([])

    const settings = (await api('GET', '/notifications', account)).body.data
    for (const channel of ['slack', 'teams'])
      expect(settings[channel].last_delivery).toMatchObject({
        status: 'delivered',
        attempts: 1,
        error: null,
      })
  }, 60_000)

  test('only alerts at or above a channel’s threshold; no channel, no delivery', async () => {
    const { account, slack, teams } = await connected('medium', 'critical')
    const quiet = await t.account()
    const event = (severity: string, id: string) => ({
      type: 'alert.created' as const,
      data: { alert_id: id, domain: 'levels.example', severity, title: `A ${severity} alert` },
      occurredAt: new Date(),
    })
    await appendEvent(db(), account.accountId, event('low', '00000000-0000-4000-8000-000000000001'))
    await appendEvent(db(), account.accountId, event('high', '00000000-0000-4000-8000-000000000002'))
    await appendEvent(db(), quiet.accountId, event('critical', '00000000-0000-4000-8000-000000000003'))
    await until(
      () => deliveriesOf(account.accountId),
      (rows) => rows.length === 1 && rows[0]!.status === 'delivered',
    )
    expect(slack.arrivals.map((a) => a.body.blocks[1].text.text)).toEqual(['*A high alert*'])
    expect(teams.arrivals).toEqual([])
    expect(await deliveriesOf(quiet.accountId)).toEqual([])
  }, 30_000)
})

describe('failures', () => {
  test('a 500 is retried 5 s later and delivered; the failure stays recorded', async () => {
    const { account, slack } = await connected()
    slack.failNext(1, 500)
    await appendEvent(db(), account.accountId, {
      type: 'alert.created',
      data: {
        alert_id: '00000000-0000-4000-8000-000000000010',
        domain: 'retry.example',
        severity: 'high',
        title: 'Retried',
      },
      occurredAt: new Date(),
    } as never)
    const [done] = await until(
      async () => (await deliveriesOf(account.accountId)).filter((d) => d.channel === 'slack'),
      (rows) => rows[0]?.status === 'delivered',
    )
    expect(done).toMatchObject({ status: 'delivered', attempts: 2, error: 'HTTP 500' })
    expect(slack.arrivals.map((a) => a.status)).toEqual([500, 200])
    const last = (await api('GET', '/notifications', account)).body.data.slack.last_delivery
    expect(last).toMatchObject({ status: 'delivered', attempts: 2, error: 'HTTP 500' })
  }, 30_000)

  test('a 404 (the webhook was removed) fails at once, recorded, logged and shown', async () => {
    const { account, teams } = await connected()
    teams.failNext(1, 404)
    await appendEvent(db(), account.accountId, {
      type: 'alert.created',
      data: {
        alert_id: '00000000-0000-4000-8000-000000000020',
        domain: 'gone.example',
        severity: 'critical',
        title: 'Gone',
      },
      occurredAt: new Date(),
    } as never)
    await until(
      async () => (await deliveriesOf(account.accountId)).filter((d) => d.channel === 'teams'),
      (rows) => rows[0]?.status === 'failed',
    )
    const last = (await api('GET', '/notifications', account)).body.data.teams.last_delivery
    expect(last).toMatchObject({ event: 'alert.created', status: 'failed', attempts: 1, error: 'HTTP 404' })
    expect(t.logs.some((l) => l.includes('chat message attempt') && l.includes('HTTP 404'))).toBe(true)
  }, 30_000)
})

describe('POST /notifications/test', () => {
  test('Slack and Teams: a test message now, in the documented shapes, answered and shown', async () => {
    const { account, slack, teams } = await connected()
    const toSlack = await api('POST', '/notifications/test', account, { channel: 'slack' })
    expect(toSlack.status).toBe(200)
    expect(toSlack.body.data).toEqual({
      channel: 'slack',
      status: 'delivered',
      outcome: 'HTTP 200',
      recipients: [],
    })
    expect(slack.arrivals).toHaveLength(1)
    expect(slack.arrivals[0]!.problems).toEqual([])
    expect(slack.arrivals[0]!.body.blocks[0].text.text).toBe('Test message from dmarcwatch')
    expect(slack.arrivals[0]!.body.blocks[2].elements[0].url).toBe(`${PUBLIC_URL}/settings/notifications`)

    const toTeams = await api('POST', '/notifications/test', account, { channel: 'teams' })
    expect(toTeams.body.data).toEqual({
      channel: 'teams',
      status: 'delivered',
      outcome: 'HTTP 202',
      recipients: [],
    })
    expect(teams.arrivals[0]!.problems).toEqual([])
    expect(teams.arrivals[0]!.body.attachments[0].content.body[0].text).toBe('Test message from dmarcwatch')

    teams.failNext(1, 403)
    const refused = await api('POST', '/notifications/test', account, { channel: 'teams' })
    expect(refused.body.data).toMatchObject({ status: 'failed', outcome: 'HTTP 403' })
    const settings = (await api('GET', '/notifications', account)).body.data
    expect(settings.slack.last_delivery).toMatchObject({ event: 'test', status: 'delivered' })
    expect(settings.teams.last_delivery).toMatchObject({ event: 'test', status: 'failed', error: 'HTTP 403' })
  })

  test('no URL saved: 400 on the channel’s URL; email: 503 email_not_configured; unknown channel: 400', async () => {
    const account = await t.account()
    const slack = await api('POST', '/notifications/test', account, { channel: 'slack' })
    expect(slack.status).toBe(400)
    expect(slack.body.errors['slack.webhook_url']).toBeArray()
    const email = await api('POST', '/notifications/test', account, { channel: 'email' })
    expect(email.status).toBe(503)
    expect(email.body.error).toBe('email_not_configured')
    expect((await api('POST', '/notifications/test', account, { channel: 'pager' })).status).toBe(400)
  })
})
