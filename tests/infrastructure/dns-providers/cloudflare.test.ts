import { afterEach, describe, expect, test } from 'bun:test'
import { createCloudflareProvider } from '../../../infrastructure/dns-providers/cloudflare.ts'
import {
  type CloudflareReplay,
  RECORDED,
  type ReplayRoute,
  startCloudflareReplay,
} from '../../support/cloudflare-replay.ts'
import { loopbackProviderHttp } from '../../support/provider-http.ts'

// The Cloudflare adapter against recorded responses that follow Cloudflare's documented API v4
// contract (tests/fixtures/cloudflare/SOURCES.md), served by a local replay server: the adapter
// makes real HTTP requests, and the test checks both the requests and how the answers are read.

const { zone: ZONE, records: RECORDS, token: TOKEN, spf: OLD_SPF } = RECORDED

let replay: CloudflareReplay | undefined

afterEach(async () => {
  await replay?.stop()
  replay = undefined
})

function provider(routes: ReplayRoute[], options: { accountId?: string } = {}) {
  replay = startCloudflareReplay(routes)
  return createCloudflareProvider({
    apiToken: TOKEN,
    baseUrl: replay.baseUrl,
    recordsPerPage: 4,
    http: loopbackProviderHttp(),
    ...options,
  })
}

const spfList: ReplayRoute = {
  method: 'GET',
  path: RECORDS,
  query: { 'name.exact': 'example.com', type: 'TXT' },
  fixture: 'dns-records-spf.json',
}

describe('authenticate', () => {
  test('an active token verifies, sent as a bearer token', async () => {
    const cf = provider([{ method: 'GET', path: '/user/tokens/verify', fixture: 'user-tokens-verify.json' }])
    expect(await cf.authenticate()).toEqual({ ok: true, value: {} })
    expect(replay!.requests.map((r) => [r.method, r.path, r.authorization])).toEqual([
      ['GET', '/user/tokens/verify', `Bearer ${TOKEN}`],
    ])
  })

  test('an account-owned token is verified under its account', async () => {
    const account = '01a7362d577a6c3019a474fd6f485823'
    const path = `/accounts/${account}/tokens/verify`
    const cf = provider([{ method: 'GET', path, fixture: 'user-tokens-verify.json' }], { accountId: account })
    expect(await cf.authenticate()).toEqual({ ok: true, value: { account } })
  })

  test('an invalid token (401, code 1000) is bad_credentials', async () => {
    const cf = provider([
      { method: 'GET', path: '/user/tokens/verify', fixture: 'user-tokens-verify-invalid.json' },
    ])
    const result = await cf.authenticate()
    expect(result.ok).toBe(false)
    if (!result.ok) {
      expect(result.failure.kind).toBe('bad_credentials')
      expect(result.failure.message).toContain('1000 Invalid API Token')
    }
  })

  test('an expired token is bad_credentials even though the call succeeded', async () => {
    const cf = provider([
      { method: 'GET', path: '/user/tokens/verify', fixture: 'user-tokens-verify-expired.json' },
    ])
    expect(await cf.authenticate()).toEqual({
      ok: false,
      failure: { kind: 'bad_credentials', message: 'the API token is expired' },
    })
  })
})

test('listZones follows the pages Cloudflare reports and stops at the last one', async () => {
  const cf = provider([
    { method: 'GET', path: '/zones', query: { page: '1', per_page: '50' }, fixture: 'zones-page-1.json' },
    { method: 'GET', path: '/zones', query: { page: '2', per_page: '50' }, fixture: 'zones-page-2.json' },
  ])
  const result = await cf.listZones()
  if (!result.ok) throw new Error(result.failure.message)
  expect(result.value).toHaveLength(51)
  expect(result.value[0]).toEqual(ZONE)
  expect(result.value[50]?.name).toBe('zone-50.example')
  expect(replay!.requests).toHaveLength(2)
  expect(replay!.unmatched).toEqual([])
})

describe('readRecords', () => {
  test('groups records into sets across pages: TXT unquoted and joined, MX with its priority', async () => {
    const cf = provider([
      {
        method: 'GET',
        path: RECORDS,
        query: { page: '1', per_page: '4' },
        fixture: 'dns-records-page-1.json',
      },
      {
        method: 'GET',
        path: RECORDS,
        query: { page: '2', per_page: '4' },
        fixture: 'dns-records-page-2.json',
      },
    ])
    const result = await cf.readRecords(ZONE)
    expect(result).toEqual({
      ok: true,
      value: [
        {
          name: '_dmarc.example.com',
          type: 'TXT',
          ttl: 3600,
          values: ['v=DMARC1; p=none; rua=mailto:dmarc@example.com'],
        },
        { name: 'example.com', type: 'A', ttl: 1, values: ['192.0.2.10'] },
        { name: 'example.com', type: 'MX', ttl: 3600, values: ['10 mx1.example.com', '20 mx2.example.net'] },
        { name: 'example.com', type: 'TXT', ttl: 300, values: [OLD_SPF] },
        {
          name: 'selector1._domainkey.example.com',
          type: 'CNAME',
          ttl: 3600,
          values: ['selector1-example-com._domainkey.example.onmicrosoft.com'],
        },
        { name: 'www.example.com', type: 'CNAME', ttl: 1, values: ['example.com'] },
      ],
    })
    expect(replay!.unmatched).toEqual([])
  })

  test('a name and type filter is sent as name.exact and type', async () => {
    const cf = provider([spfList])
    const result = await cf.readRecords(ZONE, { name: 'Example.COM.', type: 'txt' })
    expect(result).toEqual({
      ok: true,
      value: [{ name: 'example.com', type: 'TXT', ttl: 300, values: [OLD_SPF] }],
    })
    expect(replay!.requests[0]?.query).toMatchObject({ 'name.exact': 'example.com', type: 'TXT' })
  })

  test('an unknown zone id (400, code 7003) is not_found', async () => {
    const cf = provider([
      {
        method: 'GET',
        path: '/zones/0000000000000000000000000000dead/dns_records',
        fixture: 'zone-not-found.json',
      },
    ])
    const result = await cf.readRecords({ id: '0000000000000000000000000000dead', name: 'missing.example' })
    expect(result.ok ? 'ok' : result.failure.kind).toBe('not_found')
  })

  test('a token without DNS permission (403) is forbidden', async () => {
    const cf = provider([{ method: 'GET', path: RECORDS, fixture: 'forbidden.json' }])
    const result = await cf.readRecords(ZONE)
    expect(result.ok ? 'ok' : result.failure.kind).toBe('forbidden')
  })

  test('429 with Retry-After is rate_limited with the delay; the adapter does not retry by itself', async () => {
    const cf = provider([{ method: 'GET', path: RECORDS, fixture: 'rate-limited.json' }])
    const result = await cf.readRecords(ZONE)
    expect(result.ok ? null : result.failure).toMatchObject({ kind: 'rate_limited', retryAfter: 30 })
    expect(replay!.requests).toHaveLength(1)
  })

  test('a 500 is unavailable, and so is an unreachable API', async () => {
    const cf = provider([{ method: 'GET', path: RECORDS, fixture: 'server-error.json' }])
    const result = await cf.readRecords(ZONE)
    expect(result.ok ? 'ok' : result.failure.kind).toBe('unavailable')
    const closed = createCloudflareProvider({
      apiToken: TOKEN,
      baseUrl: 'http://127.0.0.1:1/client/v4',
      http: loopbackProviderHttp({ connectTimeoutMs: 2000 }),
    })
    const down = await closed.listZones()
    expect(down.ok ? 'ok' : down.failure.kind).toBe('unavailable')
  })
})
