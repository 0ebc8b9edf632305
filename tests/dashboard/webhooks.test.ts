import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { webhookDeliveries } from '../../infrastructure/db/schema/webhooks.ts'
import { apiSettingsView } from '../../src/dashboard/settings-views.ts'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { csrfOf, type FormClient, formClient } from './client.ts'

// Settings → API access, the webhook section (issue #8): URL (the same check as PUT /webhooks),
// secret (reveal, rotate), test ping, the last deliveries and redelivery.

let t: TestApp
let client: FormClient
let email: string

const secretOf = (page: string) =>
  /<code class="value secret" id="webhook-secret">(whsec_[^<]+)<\/code>/.exec(page)?.[1]

beforeAll(async () => {
  t = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: '1' })
  client = formClient(t)
  email = `hooks-${Math.random().toString(36).slice(2, 8)}@example.com`
  await client.signUp(email)
}, 60_000)
afterAll(async () => {
  await t.close()
})

describe('webhook settings page', () => {
  test('before a URL: an empty form, no secret, ping disabled, no deliveries', async () => {
    const page = await client.get('/settings/api')
    expect(page.status).toBe(200)
    expect(page.html).toContain('id="webhooks"')
    expect(page.html).toContain('name="webhook_url"')
    expect(secretOf(page.html)).toBeUndefined()
    expect(page.html).toContain('No deliveries yet.')
    expect(page.html).toContain('<button type="submit" disabled>Send test ping</button>')
  })

  test('a bad URL is refused at the field, with the API’s message', async () => {
    const answer = await client.submit('/settings/api', { webhook_url: 'not a url' }, '/settings/api/webhook')
    expect(answer.status).toBe(400)
    expect(answer.html).toContain('There is a problem')
    expect(answer.html).toContain('id="webhook_url-error"')
    expect(answer.html).toContain('The url must be an absolute URL')
    expect(answer.html).toContain('value="not a url"')
    expect(answer.html).toContain('aria-invalid="true"')
    const ftp = await client.submit(
      '/settings/api',
      { webhook_url: 'ftp://hooks.example' },
      '/settings/api/webhook',
    )
    expect(ftp.status).toBe(400)
    expect(ftp.html).toContain('The url must use https (got ftp).')
    // Nothing was saved.
    const api = await t.request('GET', '/api/v1/webhooks', { token: await t.tokenFor(email) })
    expect(api.body.data.url).toBeNull()
  })

  test('saving a URL stores it (as the API sees it) and creates the secret, revealed in <details>', async () => {
    const saved = await client.submit(
      '/settings/api',
      { webhook_url: 'https://hooks.example.com/dw' },
      '/settings/api/webhook',
    )
    expect(saved.status).toBe(303)
    expect(saved.location).toBe('/settings/api?webhook=saved#webhooks')
    const page = await client.get('/settings/api?webhook=saved')
    expect(page.html).toContain('The webhook URL is saved.')
    expect(page.html).toContain('value="https://hooks.example.com/dw"')
    expect(page.html).toContain('<details><summary>Reveal the signing secret</summary>')
    const secret = secretOf(page.html)
    expect(secret).toStartWith('whsec_')
    const api = await t.request('GET', '/api/v1/webhooks', { token: await t.tokenFor(email) })
    expect(api.body.data.url).toBe('https://hooks.example.com/dw')
    expect(api.body.data.secret).toBe(secret)
  })

  test('rotate gives a new secret', async () => {
    const before = secretOf((await client.get('/settings/api')).html)
    const rotated = await client.submit('/settings/api', {}, '/settings/api/webhook/secret/rotate')
    expect(rotated.status).toBe(303)
    const page = await client.get(rotated.location!.replace('#webhooks', ''))
    expect(page.html).toContain('The signing secret is rotated')
    const after = secretOf(page.html)
    expect(after).toStartWith('whsec_')
    expect(after).not.toBe(before)
  })

  test('a test ping creates a pending delivery listed on the page, whose redeliver is disabled', async () => {
    const pinged = await client.submit('/settings/api', {}, '/settings/api/webhook/test')
    expect(pinged.status).toBe(303)
    expect(pinged.location).toBe('/settings/api?webhook=pinged#webhooks')
    const page = await client.get('/settings/api?webhook=pinged')
    expect(page.html).toContain('Test ping queued.')
    expect(page.html).not.toContain('No deliveries yet.')
    expect(page.html).toContain('<th scope="row">ping</th>')
    expect(page.html).toContain('Pending: retries running')
    const api = await t.request('GET', '/api/v1/webhooks/deliveries', { token: await t.tokenFor(email) })
    expect(api.body.data).toHaveLength(1)
    expect(api.body.data[0].event).toBe('ping')
  })

  test('redeliver needs CSRF; a finished delivery is redelivered, a pending one is refused', async () => {
    const api = await t.request('GET', '/api/v1/webhooks/deliveries', { token: await t.tokenFor(email) })
    const id = api.body.data[0].id as string
    const action = `/settings/api/webhook/deliveries/${id}/redeliver`
    expect((await client.post(action, {})).status).toBe(403)
    expect((await client.post(action, { _csrf: 'forged' })).status).toBe(403)

    const csrf = csrfOf((await client.get('/settings/api')).html)
    const pending = await client.post(action, { _csrf: csrf })
    expect(pending.location).toBe('/settings/api?webhook=in_progress#webhooks')

    // The worker gave up on it: now it can be redelivered, through a form on the page.
    await t.db.database.db
      .update(webhookDeliveries)
      .set({ status: 'failed' })
      .where(eq(webhookDeliveries.id, id))
    const page = await client.get('/settings/api')
    expect(page.html).toContain(`action="${action}"`)
    const again = await client.post(action, { _csrf: csrfOf(page.html) })
    expect(again.status).toBe(303)
    expect(again.location).toBe('/settings/api?webhook=redelivered#webhooks')

    const unknown = await client.post(
      '/settings/api/webhook/deliveries/00000000-0000-0000-0000-000000000000/redeliver',
      {
        _csrf: csrf,
      },
    )
    expect(unknown.status).toBe(404)
  })

  test('an empty URL turns webhooks off', async () => {
    const off = await client.submit('/settings/api', { webhook_url: '' }, '/settings/api/webhook')
    expect(off.location).toBe('/settings/api?webhook=off#webhooks')
    const api = await t.request('GET', '/api/v1/webhooks', { token: await t.tokenFor(email) })
    expect(api.body.data.url).toBeNull()
  })

  test('logged out: the page and its forms go to login', async () => {
    const visitor = formClient(t)
    const page = await visitor.get('/settings/api')
    expect(page.status).toBe(303)
    expect(page.location).toStartWith('/login')
    const post = await visitor.post('/settings/api/webhook/test', { _csrf: 'x' })
    expect(post.status).toBe(303)
    expect(post.location).toBe('/login')
  })

  test('without a secret box the section says webhooks are not available', () => {
    const view = apiSettingsView({
      viewer: { email: 'a@example.com', csrfToken: 'c' },
      tokens: [],
      now: new Date(),
      webhook: { settings: null, deliveries: [] },
    }).toString()
    expect(view).toContain('Webhooks are not available on this server.')
    expect(view).not.toContain('name="webhook_url"')
  })
})
