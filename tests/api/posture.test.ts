import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { RSA_2048_SPKI } from '../domain/dkim/keys.ts'
import { type DnsTestServer, startDnsServer, type Zone } from '../support/dns-server.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// Status, verification and the embed scanner against a real authoritative DNS server on loopback.

const dkimKey = `v=DKIM1; k=rsa; p=${RSA_2048_SPKI}`
const zone: Zone = {
  'good.example': [
    { type: 'TXT', data: 'v=spf1 include:_spf.mailer.example -all' },
    { type: 'MX', data: { preference: 10, exchange: 'mx.good.example' } },
    { type: 'NS', data: 'ns1.good.example' },
  ],
  '_dmarc.good.example': [
    { type: 'TXT', data: 'v=DMARC1; p=reject; rua=mailto:dmarc@good.example', ttl: 600 },
  ],
  'selector1._domainkey.good.example': [{ type: 'TXT', data: [dkimKey.slice(0, 200), dkimKey.slice(200)] }],
  '_smtp._tls.good.example': [{ type: 'TXT', data: 'v=TLSRPTv1; rua=mailto:tls@good.example' }],
  'mx.good.example': [{ type: 'A', data: '192.0.2.25' }],
  '_spf.mailer.example': [{ type: 'TXT', data: 'v=spf1 ip4:192.0.2.0/24 ip6:2001:db8::/32 -all' }],
  'bad.example': [
    { type: 'TXT', data: 'v=spf1 +all' },
    { type: 'MX', data: { preference: 10, exchange: 'mx.bad.example' } },
  ],
  'mx.bad.example': [{ type: 'A', data: '192.0.2.26' }],
  'sts.example': [
    { type: 'TXT', data: 'v=spf1 -all' },
    { type: 'MX', data: { preference: 10, exchange: 'mx.sts.example' } },
  ],
  '_dmarc.sts.example': [{ type: 'TXT', data: 'v=DMARC1; p=none' }],
  '_mta-sts.sts.example': [{ type: 'TXT', data: 'v=STSv1; id=20260101' }],
  'mta-sts.sts.example': [{ type: 'A', data: '127.0.0.1' }],
  'mx.sts.example': [{ type: 'A', data: '192.0.2.27' }],
  // Hostile records: an include loop, a record of 100 terms, a string of 255 bytes, unicode, a
  // macro that expands past 253 characters, a CNAME loop at the DMARC name.
  'hostile.example': [
    {
      type: 'TXT',
      data: [
        'v=spf1 include:loop1.hostile.example exists:%{l}%{l}%{l}%{l}%{l}%{l}.%{d}.%{d}.%{d}.%{d} ',
        `${Array.from({ length: 100 }, (_, i) => `ip4:10.0.${i}.0/24`)
          .join(' ')
          .slice(0, 230)} ûñí ~all`,
      ],
    },
  ],
  'loop1.hostile.example': [{ type: 'TXT', data: 'v=spf1 include:loop2.hostile.example -all' }],
  'loop2.hostile.example': [{ type: 'TXT', data: 'v=spf1 include:loop1.hostile.example -all' }],
  '_dmarc.hostile.example': [{ type: 'CNAME', data: 'a._dmarc.hostile.example' }],
  // A NUL in a record the check reads (an include's, the DMARC record): PostgreSQL's jsonb refused
  // the stored findings, and the status answered 500 (a hostile-input sweep).
  'nul.example': [{ type: 'TXT', data: 'v=spf1 include:third.nul.example -all' }],
  'third.nul.example': [{ type: 'TXT', data: 'v=spf1 ip4:192.0.2.9 exp=x\u0000y.example -all' }],
  '_dmarc.nul.example': [{ type: 'TXT', data: 'v=DMARC1; p=none; rua=mailto:a\u0000b@nul.example' }],
  'a._dmarc.hostile.example': [{ type: 'CNAME', data: '_dmarc.hostile.example' }],
}

let dns: DnsTestServer
let t: TestApp
let owner: TestAccount

beforeAll(async () => {
  dns = await startDnsServer(zone)
  t = await startTestApp({
    DNS_SERVERS: `127.0.0.1:${dns.port}`,
    DNS_TIMEOUT_MS: '300',
    INGEST_DOMAIN: 'in.dmarcwatch.test',
  })
  owner = await t.account()
  for (const name of [
    'good.example',
    'bad.example',
    'sts.example',
    'slow.example',
    'hostile.example',
    'nul.example',
  ]) {
    const res = await t.request('POST', '/api/v1/domains', {
      token: owner.token,
      body: { domain_name: name },
    })
    expect(res.status).toBe(201)
  }
}, 60_000)
afterAll(async () => {
  await t.close()
  await dns.stop()
})

const status = (name: string, query = '') =>
  t.request('GET', `/api/v1/domains/${name}/status${query}`, { token: owner.token })

describe('GET /domains/{name}/status', () => {
  test('a well-configured domain: every area ok, p=reject, a good grade', async () => {
    const res = await status('good.example')
    expect(res.status).toBe(200)
    const s = res.body.data
    expect(s.dmarc_policy).toBe('reject')
    expect(s.dmarc).toMatchObject({
      status: 'ok',
      record: 'v=DMARC1; p=reject; rua=mailto:dmarc@good.example',
    })
    expect(s.spf.status).toBe('ok')
    expect(s.spf.summary).toContain('1/10 DNS lookups')
    // The DKIM key arrived as one two-string TXT record and was read whole.
    expect(s.dkim).toMatchObject({ status: 'ok', summary: '1 key: selector1 (rsa 2048)' })
    expect(['A', 'B']).toContain(s.grade)
    expect(s.issues.filter((i: { severity: string }) => !['info', 'low'].includes(i.severity))).toEqual([])
    expect(s.automation).toMatchObject({ level: 'manual', verified: false, status: 'monitoring_only' })

    // The domain's summary fields follow the check.
    const domain = (await t.request('GET', '/api/v1/domains/good.example', { token: owner.token })).body.data
    expect(domain.dmarc_policy).toBe('reject')
    expect(domain.status).toMatchObject({ dmarc: 'ok', spf: 'ok', dkim: 'ok', grade: s.grade })
    expect(domain.status.checked_at).toBe(s.checked_at)
  })

  test('a fresh result is served without DNS; ?refresh=1 re-checks', async () => {
    const first = (await status('good.example')).body.data
    dns.reset()
    const cached = (await status('good.example')).body.data
    expect(cached.checked_at).toBe(first.checked_at)
    expect(dns.queries).toHaveLength(0)
    // Fresh for the smallest TTL behind it (300 s by default in the zone), within 1 min .. 1 h.
    const freshFor = Date.parse(first.fresh_until) - Date.parse(first.checked_at)
    expect(freshFor).toBe(300_000)

    t.clock.now = new Date(Date.now() + 1000)
    const refreshed = (await status('good.example', '?refresh=1')).body.data
    t.clock.now = new Date()
    expect(refreshed.checked_at).not.toBe(first.checked_at)
  })

  test('a broken domain: F, with the exact records to publish', async () => {
    const s = (await status('bad.example')).body.data
    expect(s.grade).toBe('F')
    expect(s.dmarc_policy).toBe('missing')
    expect(s.dmarc.status).toBe('missing')
    const codes = s.issues.map((i: { code: string }) => i.code)
    expect(codes).toContain('dmarc.no_record')
    expect(codes).toContain('spf.all_pass')
    expect(codes).toContain('dkim.no_key_found')
    const noDmarc = s.issues.find((i: { code: string }) => i.code === 'dmarc.no_record')
    expect(noDmarc.severity).toBe('critical')
    expect(noDmarc.fix).toEqual({
      type: 'TXT',
      name: '_dmarc.bad.example',
      value: expect.stringMatching(/^v=DMARC1; p=none; rua=mailto:r[a-z2-7]+@in\.dmarcwatch\.test$/),
      note: expect.any(String),
    })
    const allPass = s.issues.find((i: { code: string }) => i.code === 'spf.all_pass')
    expect(allPass.fix).toMatchObject({ name: 'bad.example', value: 'v=spf1 ~all' })
    // Issues come worst first.
    expect(s.issues[0].severity).toBe('critical')
  })

  test('an MTA-STS policy host on a private address is not fetched (SSRF guard)', async () => {
    const s = (await status('sts.example')).body.data
    const unavailable = s.issues.find((i: { code: string }) => i.code === 'mail.mta_sts.policy_unavailable')
    expect(unavailable.message).toContain('non-public address')
    expect(s.mail.status).toBe('error')
  })

  test('DNS that never answers ends in a temporary status, not an error or a hang', async () => {
    dns.behave('_dmarc.slow.example', { drop: true })
    dns.behave('slow.example', { drop: true })
    const started = Date.now()
    const res = await status('slow.example')
    expect(res.status).toBe(200)
    expect(res.body.data.dmarc.status).toBe('warning')
    expect(res.body.data.dmarc.summary).toBe('DNS lookup failed')
    expect(Date.now() - started).toBeLessThan(10_000)
    // A failed lookup makes the result stale at the minimum: the next request re-checks soon.
    expect(Date.parse(res.body.data.fresh_until) - Date.parse(res.body.data.checked_at)).toBe(60_000)
  })

  test('hostile records end in RFC results and findings, never a hang or a 500', async () => {
    const res = await status('hostile.example')
    expect(res.status).toBe(200)
    const s = res.body.data
    expect(s.spf.status).toBe('error')
    expect(s.dmarc.status).not.toBe('ok')
    expect(s.grade).toBe('F')
  })

  test('a NUL in a record is damage in its text, stored as U+FFFD, never a 500', async () => {
    const res = await status('nul.example', '?refresh=1')
    expect(res.status).toBe(200)
    // Stored: the next read is the stored check, its text marked.
    const again = await status('nul.example', '?details=1')
    expect(again.body.data.checked_at).toBe(res.body.data.checked_at)
    expect(again.body.data.dmarc.record).toBe('v=DMARC1; p=none; rua=mailto:a\uFFFDb@nul.example')
    expect(JSON.stringify(again.body.data.findings)).toContain('x\uFFFDy.example')
  })

  test('?details=1 includes the raw findings', async () => {
    const s = (await status('good.example', '?details=1')).body.data
    expect(s.findings.spf.tree.children[0].domain).toBe('_spf.mailer.example')
    expect(s.findings.dmarc.queries[0].name).toBe('_dmarc.good.example')
  })
})

describe('POST /domains/{name}/verify', () => {
  test('fails with what was found, succeeds once the TXT exists, sends domain.verified once', async () => {
    const domain = (await t.request('GET', '/api/v1/domains/good.example', { token: owner.token })).body.data
    const before = await t.request('POST', '/api/v1/domains/good.example/verify', { token: owner.token })
    expect(before.status).toBe(200)
    expect(before.body.data).toMatchObject({ verified: false, found: [] })
    expect(before.body.data.message).toContain(domain.verification.txt_value)

    dns.set(domain.verification.txt_name, 'TXT', [{ data: 'something-else' }])
    const wrong = await t.request('POST', '/api/v1/domains/good.example/verify', { token: owner.token })
    expect(wrong.body.data).toMatchObject({ verified: false, found: ['something-else'] })

    dns.set(domain.verification.txt_name, 'TXT', [
      { data: 'something-else' },
      { data: domain.verification.txt_value },
    ])
    const ok = await t.request('POST', '/api/v1/domains/good.example/verify', { token: owner.token })
    expect(ok.body.data.verified).toBe(true)
    expect(ok.body.data.domain.verified).toBe(true)
    expect(Date.parse(ok.body.data.domain.verified_at)).not.toBeNaN()

    const again = await t.request('POST', '/api/v1/domains/good.example/verify', { token: owner.token })
    expect(again.body.data.verified).toBe(true)
    const events = rowsOf<{ type: string; data: { domain: string; verified_at: string } }>(
      await t.db.database.db.execute(
        sql`select type, data from events where account_id = ${owner.accountId}`,
      ),
    )
    expect(events).toEqual([
      {
        type: 'domain.verified',
        data: { domain: 'good.example', verified_at: ok.body.data.domain.verified_at },
      },
    ])
  })
})

describe('embed scanner', () => {
  let key: string
  beforeAll(async () => {
    const created = await t.request('POST', '/api/v1/embed-keys', {
      token: owner.token,
      body: { name: 'Site', allowed_origins: ['https://www.site.example', 'https://www.site.example/'] },
    })
    expect(created.status).toBe(201)
    expect(created.body.data.allowed_origins).toEqual(['https://www.site.example'])
    expect(created.body.data.snippet).toContain('/embed/widget.js')
    key = created.body.data.key
  })

  const scan = (domain: string, origin?: string, k = key) =>
    t.request(
      'GET',
      `/api/embed/${k}/scan?domain=${encodeURIComponent(domain)}`,
      origin ? { headers: { origin } } : {},
    )

  test('an allowed origin gets the result with CORS for that origin only', async () => {
    const res = await scan('bad.example', 'https://www.site.example')
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe('https://www.site.example')
    expect(res.body.data.grade).toBe('F')
    expect(res.body.data.areas.dmarc.status).toBe('missing')
    expect(res.headers.get('x-ratelimit-limit')).toBe('100')
  })

  test('another origin gets 403 and no CORS headers', async () => {
    const res = await scan('bad.example', 'https://evil.example')
    expect(res.status).toBe(403)
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
    const preflight = await t.app.handle(
      new Request(`http://localhost/api/embed/${key}/scan`, {
        method: 'OPTIONS',
        headers: { origin: 'https://evil.example' },
      }),
    )
    expect(preflight.status).toBe(403)
    const allowed = await t.app.handle(
      new Request(`http://localhost/api/embed/${key}/scan`, {
        method: 'OPTIONS',
        headers: { origin: 'https://www.site.example' },
      }),
    )
    expect(allowed.status).toBe(204)
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://www.site.example')
  })

  test('unknown or revoked keys are 404; bad domains are a validation error', async () => {
    expect((await scan('bad.example', undefined, 'ek_nope')).status).toBe(404)
    const invalid = await scan('not a domain', 'https://www.site.example')
    expect(invalid.status).toBe(400)
    expect(Object.keys(invalid.body.errors)).toEqual(['domain'])
    const list = await t.request('GET', '/api/v1/embed-keys', { token: owner.token })
    const id = list.body.data.find((k: { key: string }) => k.key === key).id
    expect((await t.request('DELETE', `/api/v1/embed-keys/${id}`, { token: owner.token })).status).toBe(204)
    expect((await scan('bad.example', 'https://www.site.example')).status).toBe(404)
    expect((await t.request('DELETE', `/api/v1/embed-keys/${id}`, { token: owner.token })).status).toBe(404)
  })

  test('the embed key list is paginated like every list', async () => {
    // Found by a conformance sweep: the list had no meta, and page/per_page were ignored.
    for (const name of ['Page one', 'Page two'])
      await t.request('POST', '/api/v1/embed-keys', {
        token: owner.token,
        body: { name, allowed_origins: ['https://pages.example'] },
      })
    const all = await t.request('GET', '/api/v1/embed-keys', { token: owner.token })
    const total = all.body.meta.total
    expect(total).toBeGreaterThanOrEqual(2)
    expect(all.body.data).toHaveLength(total)
    const second = await t.request('GET', '/api/v1/embed-keys?page=2&per_page=1', { token: owner.token })
    expect(second.status).toBe(200)
    expect(second.body.meta).toEqual({ total, page: 2, per_page: 1, last_page: total })
    expect(second.body.data).toEqual([all.body.data[1]])
    for (const query of ['per_page=999', 'page=-4', 'page=0'])
      expect((await t.request('GET', `/api/v1/embed-keys?${query}`, { token: owner.token })).status).toBe(400)
  })

  test('embed keys need real origins', async () => {
    // A path, a wildcard (origins are matched exactly) and port 0 are nothing a browser sends.
    for (const origin of ['https://site.example/path', 'https://*.site.example', 'https://site.example:0']) {
      const res = await t.request('POST', '/api/v1/embed-keys', {
        token: owner.token,
        body: { name: 'x', allowed_origins: [origin] },
      })
      expect({ origin, status: res.status }).toEqual({ origin, status: 400 })
      expect(Object.keys(res.body.errors)).toEqual(['allowed_origins'])
    }
    const invisible = await t.request('POST', '/api/v1/embed-keys', {
      token: owner.token,
      body: { name: '\u200b', allowed_origins: ['https://site.example'] },
    })
    expect(invisible.status).toBe(400)
    expect(Object.keys(invisible.body.errors)).toEqual(['name'])
  })

  test('the widget script is served', async () => {
    const res = await t.app.handle(new Request('http://localhost/embed/widget.js'))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('javascript')
    expect(await res.text()).toContain('data-dmarcwatch-scanner')
  })
})
