import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { DOMAIN, type SourceWorld, startSourceWorld } from '../support/source-reports.ts'

// The sources list and overrides end to end: real reports through intake and the worker, PTRs
// from the enrichment job, SPF includes from a loopback DNS server (tests/support/source-reports.ts).

let w: SourceWorld
const get = (path: string, token = w.owner.token) => w.t.request('GET', `/api/v1${path}`, { token })
const patch = (ip: string, body: unknown, token = w.owner.token) =>
  w.t.request('PATCH', `/api/v1/domains/${DOMAIN}/sources/${ip}`, { token, body })

beforeAll(async () => {
  w = await startSourceWorld()
}, 60_000)
afterAll(() => w.close())

describe('GET /domains/{domain}/sources', () => {
  test('every source, classified, with figures weighted by count, heaviest first', async () => {
    const res = await get(`/domains/${DOMAIN}/sources`)
    expect(res.status).toBe(200)
    const rows = res.body.data.map((s: any) => [
      s.ip,
      s.service?.id ?? null,
      s.confidence,
      s.status,
      s.messages,
    ])
    expect(rows).toEqual([
      ['74.125.0.1', 'google_workspace', 'high', 'legitimate', 100],
      ['149.72.10.20', 'sendgrid', 'high', 'legitimate', 50],
      ['203.0.113.9', null, 'low', 'suspicious', 25],
      ['198.51.100.7', null, 'low', 'unknown', 10],
      ['2001:db8::25', null, 'low', 'unknown', 3],
    ])
    const sendgrid = res.body.data[1]
    expect(sendgrid).toMatchObject({
      ptr: 'o1.ptr4242.sendgrid.net',
      service: { id: 'sendgrid', name: 'SendGrid', category: 'transactional' },
      override: null,
      share: 26.6, // 50 of 188
      rates: { dmarc_pass: 90, spf_pass: 90, spf_aligned: 90, dkim_pass: 100, dkim_aligned: 0 },
      dispositions: { none: 50, quarantine: 0, reject: 0 },
      forwarded: 0,
      first_seen: w.days[0],
      last_seen: w.days[0],
      dkim_domains: ['sendgrid.net'],
      spf_domains: [DOMAIN],
    })
    // Four kinds of evidence: the catalog range, the PTR, the published include and the d= domain.
    expect(sendgrid.evidence.map((e: any) => e.kind)).toEqual([
      'network',
      'ptr',
      'spf_include',
      'dkim_domain',
    ])
    const google = res.body.data[0]
    expect(google).toMatchObject({ first_seen: w.days[0], last_seen: w.days[1], dkim_domains: [DOMAIN] })
    expect(google.evidence).toContainEqual({
      kind: 'spf_include',
      value: '_spf.google.com',
      service: 'google_workspace',
    })
    expect(res.body.data[4]).toMatchObject({ forwarded: 3, rates: { dkim_aligned: 100, dmarc_pass: 100 } })
    expect(res.body.meta).toMatchObject({ total: 5, page: 1, per_page: 25, last_page: 1 })
    expect(res.body.meta.period.to).toBe(w.t.clock.now.toISOString().slice(0, 10))
    expect(res.body.meta.services).toEqual([
      {
        id: 'google_workspace',
        name: 'Google Workspace',
        category: 'email_platform',
        sources: 1,
        messages: 100,
        share: 53.19,
        dmarc_pass_rate: 100,
      },
      {
        id: 'sendgrid',
        name: 'SendGrid',
        category: 'transactional',
        sources: 1,
        messages: 50,
        share: 26.6,
        dmarc_pass_rate: 90,
      },
      {
        id: null,
        name: 'Unidentified',
        category: null,
        sources: 3,
        messages: 38,
        share: 20.21,
        dmarc_pass_rate: 7.89,
      },
    ])
  })

  test('filters by status, service and search, and pages', async () => {
    const ips = async (query: string) =>
      (await get(`/domains/${DOMAIN}/sources?${query}`)).body.data.map((s: any) => s.ip)
    expect(await ips('status=suspicious')).toEqual(['203.0.113.9'])
    expect(await ips('service=sendgrid')).toEqual(['149.72.10.20'])
    expect(await ips('q=2001:db8')).toEqual(['2001:db8::25'])
    expect(await ips('q=partner')).toEqual(['198.51.100.7'])
    expect(await ips('q=Google')).toEqual(['74.125.0.1'])
    const page = await get(`/domains/${DOMAIN}/sources?per_page=2&page=2`)
    expect(page.body.data.map((s: any) => s.ip)).toEqual(['203.0.113.9', '198.51.100.7'])
    expect(page.body.meta).toMatchObject({ total: 5, page: 2, per_page: 2, last_page: 3 })
    expect(page.body.meta.services).toHaveLength(3)
    const past = await get(`/domains/${DOMAIN}/sources?per_page=2&page=4`)
    expect(past.status).toBe(200)
    expect(past.body.data).toEqual([])
    // A period before the reports holds nothing.
    const empty = await get(`/domains/${DOMAIN}/sources?from=2020-01-01&to=2020-01-31`)
    expect(empty.body.meta).toMatchObject({ total: 0, last_page: 1, services: [] })
  })

  test('out-of-range queries are validation errors', async () => {
    for (const [query, field] of [
      ['days=91', 'days'],
      ['days=0', 'days'],
      ['per_page=101', 'per_page'],
      ['status=bogus', 'status'],
      ['days=7&from=2026-01-01', 'days'],
      ['from=2025-01-01&to=2026-01-02', 'to'], // 367 days: from/to span at most 366
    ]) {
      const res = await get(`/domains/${DOMAIN}/sources?${query}`)
      expect(res.status).toBe(400)
      expect(Object.keys(res.body.errors)).toEqual([field!])
    }
  })
})

describe('PATCH /domains/{domain}/sources/{source}', () => {
  test('an override changes the status, keeps its note, and null removes it', async () => {
    const set = await patch('198.51.100.7', { status: 'legitimate', note: 'partner relay' })
    expect(set.status).toBe(200)
    expect(set.body.data).toMatchObject({
      ip: '198.51.100.7',
      status: 'legitimate',
      override: { status: 'legitimate', note: 'partner relay' },
      messages: 10,
      ptr: 'mx.partner.example',
    })
    const listed = await get(`/domains/${DOMAIN}/sources?status=legitimate`)
    expect(listed.body.data.map((s: any) => s.ip)).toEqual(['74.125.0.1', '149.72.10.20', '198.51.100.7'])
    // unwanted shows as suspicious; an omitted note is kept.
    const unwanted = await patch('198.51.100.7', { status: 'unwanted' })
    expect(unwanted.body.data).toMatchObject({
      status: 'suspicious',
      override: { status: 'unwanted', note: 'partner relay' },
    })
    const cleared = await patch('198.51.100.7', { status: null })
    expect(cleared.body.data).toMatchObject({ status: 'unknown', override: null })
  })

  test('the IP may be spelled any way; the answer is canonical', async () => {
    const res = await patch('2001:DB8:0:0:0:0:0:25', { status: 'forwarder', note: null })
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({ ip: '2001:db8::25', status: 'forwarder', override: { note: null } })
    const listed = await get(`/domains/${DOMAIN}/sources?status=forwarder`)
    expect(listed.body.data.map((s: any) => s.ip)).toEqual(['2001:db8::25'])
    // An IPv4-mapped spelling is the IPv4 source, as intake stores it.
    const mapped = await patch('::ffff:198.51.100.7', { status: 'legitimate' })
    expect(mapped.status).toBe(200)
    expect(mapped.body.data).toMatchObject({ ip: '198.51.100.7', status: 'legitimate' })
    await patch('198.51.100.7', { status: null })
  })

  test('an IP that never sent is 404; a non-IP or a bad status is a validation error', async () => {
    const missing = await patch('192.0.2.200', { status: 'legitimate' })
    expect(missing.status).toBe(404)
    expect(missing.body).toEqual({ error: 'not_found', message: 'No such source in your account.' })
    const notIp = await patch('mail.example.com', { status: 'legitimate' })
    expect(notIp.status).toBe(400)
    expect(Object.keys(notIp.body.errors)).toEqual(['source'])
    const bad = await patch('198.51.100.7', { status: 'trusted' })
    expect(bad.status).toBe(400)
    expect(Object.keys(bad.body.errors)).toEqual(['status'])
    const absent = await patch('198.51.100.7', { note: 'x' })
    expect(absent.status).toBe(400)
    const malformed = await patch('198.51.100.7', '{"status":')
    expect(malformed.status).toBe(400)
    expect(Object.keys(malformed.body.errors)).toEqual(['body'])
  })
})

test('another account gets 403 domain_not_found on every sources route', async () => {
  const token = w.stranger.token
  const answers = [
    await get(`/domains/${DOMAIN}/sources`, token),
    await get(`/domains/${DOMAIN}/sources/intelligence`, token),
    await patch('203.0.113.9', { status: 'legitimate' }, token),
    await w.t.request('POST', `/api/v1/domains/${DOMAIN}/simulate`, {
      token,
      body: { dmarc_record: 'v=DMARC1; p=reject' },
    }),
  ]
  for (const res of answers) {
    expect(res.status).toBe(403)
    expect(res.body.error).toBe('domain_not_found')
  }
  expect((await get(`/domains/${DOMAIN}/sources`, 'dw_not_a_token')).status).toBe(401)
})
