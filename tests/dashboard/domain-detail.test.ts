import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { DOMAIN, type SourceWorld, startSourceWorld } from '../support/source-reports.ts'
import { csrfOf, type FormClient, formClient, PASSWORD } from './client.ts'

// The domain pages with real reports (tests/support/source-reports.ts: intake, worker, enrichment,
// a loopback DNS): the list's organization filter, the domain page's chart and top sources, the
// sources page, and SPF management through forms (activate, add a source, history, rollback, the
// DNS-write limit), each checked against what the JSON API answers afterwards.

let w: SourceWorld
let client: FormClient
const api = (method: string, path: string, body?: unknown) =>
  w.t.request(method, `/api/v1${path}`, { token: w.owner.token, body })
// As html.ts escapes: `'` as &#39;.
const esc = (text: string) => Bun.escapeHTML(text).replaceAll('&#x27;', '&#39;')

beforeAll(async () => {
  w = await startSourceWorld()
  // The world's owner was created without a password: give it one to log in to the dashboard.
  const hash = await Bun.password.hash(PASSWORD, { algorithm: 'argon2id' })
  await w.t.db.database.db.execute(
    sql`update users set password_hash = ${hash} where lower(email) = lower(${w.owner.email})`,
  )
  client = formClient(w.t)
  const login = await client.logIn(w.owner.email)
  expect(login.status).toBe(303)
}, 90_000)
afterAll(() => w?.close())

describe('the domain list', () => {
  test('filters by organization, like GET /domains?organization_id=', async () => {
    const org = await api('POST', '/organizations', { name: 'Acme Group' })
    expect(org.status).toBe(201)
    const id = org.body.data.id as number
    expect((await api('PATCH', `/domains/${DOMAIN}`, { organization_id: id })).status).toBe(200)
    expect((await api('POST', '/domains', { domain_name: 'second.example' })).status).toBe(201)

    const all = await client.get('/domains')
    expect(all.html).toContain('<h2>2 domains</h2>')
    expect(all.html).toContain(`<option value="${id}">Acme Group</option>`)
    expect(all.html).toContain('href="/dns-providers"')
    expect(all.html).toContain('Import from DNS provider')

    const filtered = await client.get(`/domains?organization=${id}`)
    const listed = [...filtered.html.matchAll(/<th scope="row"><a href="\/domains\/([^"]+)">/g)].map(
      (m) => m[1],
    )
    const fromApi = (await api('GET', `/domains?organization_id=${id}`)).body.data.map(
      (d: { name: string }) => d.name,
    )
    expect(listed).toEqual(fromApi)
    expect(listed).toEqual([DOMAIN])
    expect(filtered.html).toContain(`<option value="${id}" selected>Acme Group</option>`)
    expect(filtered.html).toContain('<h2>1 domain</h2>')
    // Anything but one of the account's organizations lists every domain.
    for (const other of ['999999', 'x']) {
      expect((await client.get(`/domains?organization=${other}`)).html).toContain('<h2>2 domains</h2>')
    }
  })
})

describe('the domain page', () => {
  test('a chart of the last 30 days with the daily figures, and the top sources', async () => {
    const page = await client.get(`/domains/${DOMAIN}`)
    expect(page.status).toBe(200)
    expect(page.html).toContain('<figure class="chart"')
    expect(page.html).toContain('<svg')
    const summary = (await api('GET', `/dmarc-reports/domains/${DOMAIN}/summary`)).body.data
    expect(summary.daily.map((d: { day: string }) => d.day)).toEqual(w.days)
    for (const day of summary.daily) {
      expect(page.html).toContain(
        `<tr><th scope="row">${day.day}</th><td class="num">${day.messages}</td><td class="num">${day.dmarc_pass}</td>`,
      )
    }
    // The top sources in the API's order, with their services and recommendations.
    const sources = (await api('GET', `/domains/${DOMAIN}/sources`)).body.data
    const shown = [...page.html.matchAll(/<th scope="row"><code>([^<]+)<\/code>/g)].map((m) => m[1])
    expect(shown).toEqual(sources.slice(0, 5).map((s: { ip: string }) => s.ip))
    expect(page.html).toContain('Google Workspace')
    expect(page.html).toContain('SendGrid')
    const advice = (await api('GET', `/domains/${DOMAIN}/sources/intelligence`)).body.data
    const spoofing = advice.find((r: { type: string }) => r.type === 'block_spoofing')
    expect(spoofing).toBeDefined()
    expect(page.html).toContain(esc(spoofing.title))
    expect(page.html).toContain(`href="/domains/${DOMAIN}/sources"`)
    expect(page.html).toContain(`href="/domains/${DOMAIN}/spf"`)
  })

  test('the sources page filters by status and pages like the API', async () => {
    const ipsOf = (html: string) =>
      [...html.matchAll(/<th scope="row"><code>([^<]+)<\/code>/g)].map((m) => m[1])
    const all = await client.get(`/domains/${DOMAIN}/sources`)
    expect(all.status).toBe(200)
    const fromApi = (await api('GET', `/domains/${DOMAIN}/sources`)).body.data.map(
      (s: { ip: string }) => s.ip,
    )
    expect(ipsOf(all.html)).toEqual(fromApi)
    expect(all.html).toContain('<h2>5 sources</h2>')
    expect(all.html).toContain('<h2>Recommendations</h2>')

    expect(ipsOf((await client.get(`/domains/${DOMAIN}/sources?status=suspicious`)).html)).toEqual([
      '203.0.113.9',
    ])
    const second = await client.get(`/domains/${DOMAIN}/sources?per_page=2&page=2`)
    const apiSecond = await api('GET', `/domains/${DOMAIN}/sources?per_page=2&page=2`)
    expect(ipsOf(second.html)).toEqual(apiSecond.body.data.map((s: { ip: string }) => s.ip))
    expect(second.html).toContain('Page 2 of 3')
    expect(second.html).toContain(`href="/domains/${DOMAIN}/sources?per_page=2&amp;page=3"`)
    expect(second.html).toContain(`href="/domains/${DOMAIN}/sources?per_page=2&amp;page=1"`)
  })
})

describe('SPF management', () => {
  const spfPath = `/domains/${DOMAIN}/spf`
  const spf = async () => (await api('GET', `/domains/${DOMAIN}/spf`)).body.data
  const post = async (action: string, fields: Record<string, string> = {}) =>
    client.post(`${spfPath}/${action}`, { _csrf: await client.csrf(), ...fields })

  test('the published record, its include tree and its lookups against the limit of 10', async () => {
    const page = await client.get(spfPath)
    expect(page.status).toBe(200)
    const data = await spf()
    expect(data.managed).toBe(false)
    expect(page.html).toContain(esc(data.published.record))
    expect(page.html).toContain(`${data.published.lookups} of 10 DNS lookups`)
    for (const child of data.published.include_tree.children) {
      expect(page.html).toContain(`<code>${child.domain}</code>`)
    }
    expect(page.html).toContain('<ul class="tree">')
    expect(page.html).toContain('Activate SPF management')
    // Nothing to detect yet: SendGrid's include is published, the partner is not marked legitimate.
    expect(page.html).toContain('No sender of the last 30 days needs adding')
  })

  test('before activation, adding a source gives the record to publish and stores nothing', async () => {
    const answer = await post('sources', { source: '198.51.100.7' })
    expect(answer.status).toBe(200)
    expect(answer.html).toContain(
      esc('v=spf1 include:_spf.google.com include:sendgrid.net ip4:198.51.100.7 ~all'),
    )
    expect((await spf()).managed).toBe(false)
  })

  test('forms need the CSRF token', async () => {
    const refused = await client.post(`${spfPath}/activate`, { flatten: 'auto' })
    expect(refused.status).toBe(403)
    const forged = await client.post(`${spfPath}/activate`, { _csrf: 'x'.repeat(43), flatten: 'auto' })
    expect(forged.status).toBe(403)
    expect((await spf()).managed).toBe(false)
  })

  test('activate, then publish the record the page shows', async () => {
    const activated = await post('activate', { all: '', flatten: 'auto' })
    expect(activated.status).toBe(303)
    expect(activated.location).toBe(`${spfPath}?done=activated`)
    const data = await spf()
    expect(data.managed).toBe(true)
    expect(data.management.version).toBe(1)
    const page = await client.get(activated.location!)
    expect(page.html).toContain('SPF management is active.')
    expect(page.html).toContain(esc(data.management.publish.record))
    expect(page.html).toContain(`<code>${data.management.hosted_name}</code>`)
    expect(page.html).not.toContain('Activate SPF management')
    // Activating again with the same settings writes nothing.
    const again = await post('activate', { all: '~all', flatten: 'auto' })
    expect(again.location).toBe(`${spfPath}?done=unchanged`)
    expect((await spf()).management.version).toBe(1)
  })

  test('a detected source is offered and added as a new version', async () => {
    expect(
      (await api('PATCH', `/domains/${DOMAIN}/sources/198.51.100.7`, { status: 'legitimate' })).status,
    ).toBe(200)
    const page = await client.get(spfPath)
    expect(page.html).toContain('Add ip4:198.51.100.7')
    const form =
      /<form method="post" action="([^"]+)">(?:(?!<\/form>).)*?name="source" value="198\.51\.100\.7"/s.exec(
        page.html,
      )
    expect(form?.[1]).toBe(`${spfPath}/sources`)
    const added = await client.post(`${spfPath}/sources`, {
      _csrf: csrfOf(page.html),
      source: '198.51.100.7',
    })
    expect(added.status).toBe(303)
    expect(added.location).toBe(`${spfPath}?done=added`)
    const data = await spf()
    expect(data.management.version).toBe(2)
    expect(data.management.config.sources.map((s: { term: string }) => s.term)).toContain('ip4:198.51.100.7')
    const after = await client.get(added.location!)
    expect(after.html).toContain('Source added')
    expect(after.html).not.toContain('Add ip4:198.51.100.7')
    const again = await post('sources', { source: '198.51.100.7' })
    expect(again.location).toBe(`${spfPath}?done=already`)
  })

  test('refusals are messages on the page, at the field', async () => {
    const bad = await post('sources', { source: 'not-an-ip' })
    expect(bad.status).toBe(400)
    expect(bad.html).toContain(esc("'not-an-ip' is not an IP address."))
    expect(bad.html).toContain('aria-invalid="true"')
    expect(bad.html).toContain('value="not-an-ip"')
    const unseen = await post('sources', { source: '192.0.2.99' })
    expect(unseen.status).toBe(404)
    expect(unseen.html).toContain('did not send mail as acme.example in the last 90 days')
    const outside = await post('sources', { source: '198.51.100.7', network: '192.0.2.0/24' })
    expect(outside.status).toBe(400)
    expect(outside.html).toContain('does not hold the source 198.51.100.7')
    const version = await post('rollback', { version: '99' })
    expect(version.status).toBe(404)
    expect(version.html).toContain('No such version')
    expect((await spf()).management.version).toBe(2)
  })

  test('the history lists every version; rolling back serves an old one again', async () => {
    const page = await client.get(spfPath)
    const versions = (await api('GET', `/domains/${DOMAIN}/spf/versions`)).body.data
    expect(versions.map((v: { version: number }) => v.version)).toEqual([2, 1])
    for (const v of versions) expect(page.html).toContain(esc(v.reason))
    expect(page.html).toContain('Roll back to this version<span class="skip"> (version 1)</span>')
    expect(page.html).not.toContain('(version 2)</span>')

    const rolled = await post('rollback', { version: '1' })
    expect(rolled.status).toBe(303)
    expect(rolled.location).toBe(`${spfPath}?done=rolled-back`)
    const data = await spf()
    expect(data.management.version).toBe(3)
    expect(data.management.config.sources.map((s: { term: string }) => s.term)).not.toContain(
      'ip4:198.51.100.7',
    )
    const after = await client.get(rolled.location!)
    expect(after.html).toContain('Rolled back')
    expect(after.html).toContain('(version 2)</span>')
  })

  test('at level automatic, detection on request adds what it finds', async () => {
    expect((await api('PATCH', `/domains/${DOMAIN}`, { automation_level: 'automatic' })).status).toBe(200)
    const page = await client.get(spfPath)
    expect(page.html).toContain('Detect and add sources now')
    expect(page.html).not.toContain('Add ip4:198.51.100.7')
    const detected = await post('detect')
    expect(detected.location).toBe(`${spfPath}?done=detected`)
    const data = await spf()
    expect(data.management.version).toBe(4)
    expect(data.management.config.sources.map((s: { term: string }) => s.term)).toContain('ip4:198.51.100.7')
  })

  test('a source that would pass 10 DNS lookups is refused when flattening is off', async () => {
    // many.example costs 11 lookups by itself: its include and the ten below it.
    const names = Array.from({ length: 10 }, (_, i) => `l${i}.many.example`)
    for (const name of names) w.dns.set(name, 'TXT', [{ data: 'v=spf1 ip4:192.0.2.1 -all' }])
    w.dns.set('many.example', 'TXT', [{ data: `v=spf1 ${names.map((n) => `include:${n}`).join(' ')} -all` }])
    const never = await post('activate', { all: '~all', flatten: 'never' })
    expect(never.location).toBe(`${spfPath}?done=updated`)
    expect((await spf()).management.config.flatten).toBe('never')
    const before = (await spf()).management.version
    const refused = await post('sources', { source: '198.51.100.7', include: 'many.example' })
    expect(refused.status).toBe(400)
    expect(refused.html).toMatch(/The SPF record would need \d+ DNS lookups; the limit is 10/)
    expect(refused.html).toContain('value="many.example"')
    expect((await spf()).management.version).toBe(before)
  })

  test('past the DNS-write limit, the change is refused with a message, not an error', async () => {
    const limit = w.t.config.rateLimits.dnsWritesPerMinute
    // The test clock stands still: every write so far is in this minute.
    let refused = null
    for (let i = 0; i < limit && refused === null; i++) {
      const answer = await post('activate', { all: i % 2 === 0 ? '-all' : '~all', flatten: 'auto' })
      if (answer.status !== 303) refused = answer
    }
    expect(refused?.status).toBe(429)
    expect(refused?.headers.get('retry-after')).toMatch(/^\d+$/)
    expect(refused?.html).toContain(`Too many DNS changes: at most ${limit} a minute`)
    const versions = await api('GET', `/domains/${DOMAIN}/spf/versions`)
    expect(versions.body.meta.total).toBe(limit)
  })

  test('an unverified domain is pointed to verification', async () => {
    const page = await client.get('/domains/second.example/spf')
    expect(page.status).toBe(200)
    expect(page.html).toContain('Verify ownership of second.example first')
    expect(page.html).not.toContain('Activate SPF management')
    const refused = await client.post('/domains/second.example/spf/activate', {
      _csrf: csrfOf(page.html),
      flatten: 'auto',
    })
    expect(refused.status).toBe(403)
    expect(refused.html).toContain('Verify ownership of second.example first')
  })
})

test('another account’s domain is a 404 on every page and form', async () => {
  const stranger = formClient(w.t)
  await stranger.signUp(`stranger-${Math.random().toString(36).slice(2, 8)}@example.com`)
  for (const path of ['', '/sources', '/spf']) {
    const page = await stranger.get(`/domains/${DOMAIN}${path}`)
    expect(page.status).toBe(404)
    expect(page.html).toContain('Domain not found')
    expect(page.html).not.toContain('198.51.100.7')
  }
  const csrf = await stranger.csrf()
  for (const [action, fields] of [
    ['activate', { flatten: 'always' }],
    ['sources', { source: '203.0.113.9' }],
    ['rollback', { version: '1' }],
    ['detect', {}],
  ] as const) {
    const answer = await stranger.post(`/domains/${DOMAIN}/spf/${action}`, { _csrf: csrf, ...fields })
    expect(answer.status).toBe(404)
  }
  const versions = await api('GET', `/domains/${DOMAIN}/spf/versions`)
  expect(versions.body.meta.total).toBe(w.t.config.rateLimits.dnsWritesPerMinute)
})
