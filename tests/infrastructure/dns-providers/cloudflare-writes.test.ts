import { afterEach, describe, expect, test } from 'bun:test'
import { createCloudflareProvider } from '../../../infrastructure/dns-providers/cloudflare.ts'
import {
  type CloudflareReplay,
  RECORDED,
  type ReplayRoute,
  startCloudflareReplay,
} from '../../support/cloudflare-replay.ts'
import { loopbackProviderHttp } from '../../support/provider-http.ts'

// Writes through the Cloudflare adapter against the recorded API v4 responses: what the adapter
// sends (one batch of deletes, patches and posts per change) and how the answers are read.

const { zone: ZONE, records: RECORDS, token: TOKEN, spfRecordId: SPF_RECORD_ID, spf: OLD_SPF } = RECORDED

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

describe('upsertRecordSet', () => {
  test('creates a missing set with one batch of posts, TXT quoted', async () => {
    const cf = provider([
      {
        method: 'GET',
        path: RECORDS,
        query: { 'name.exact': '_dmarc.example.com' },
        fixture: 'dns-records-none.json',
      },
      { method: 'POST', path: `${RECORDS}/batch`, fixture: 'dns-records-batch-create.json' },
    ])
    const value = 'v=DMARC1; p=quarantine; rua=mailto:reports@dmarcwatch.example'
    const result = await cf.upsertRecordSet(ZONE, {
      name: '_dmarc.example.com',
      type: 'TXT',
      ttl: 300,
      values: [value],
    })
    expect(result).toEqual({ ok: true, value: undefined })
    expect(replay!.requests[1]?.body).toEqual({
      deletes: [],
      patches: [],
      posts: [{ name: '_dmarc.example.com', type: 'TXT', ttl: 300, content: `"${value}"` }],
    })
  })

  test('rewrites the existing record in place (one patch) and splits a value over 255 bytes', async () => {
    const cf = provider([
      spfList,
      { method: 'POST', path: `${RECORDS}/batch`, fixture: 'dns-records-batch-update.json' },
    ])
    const long = `v=spf1 ${Array.from({ length: 20 }, (_, i) => `ip4:198.51.100.${i}`).join(' ')} include:spf.dmarcwatch.example -all`
    expect(long.length).toBeGreaterThan(255)
    const result = await cf.upsertRecordSet(ZONE, {
      name: 'example.com',
      type: 'TXT',
      ttl: 300,
      values: [long],
    })
    expect(result.ok).toBe(true)
    const body = replay!.requests[1]?.body as { patches: { id: string; content: string }[]; posts: unknown[] }
    expect(body.posts).toEqual([])
    expect(body.patches).toHaveLength(1)
    expect(body.patches[0]?.id).toBe(SPF_RECORD_ID)
    const strings = [...body.patches[0]!.content.matchAll(/"([^"]*)"/g)].map((m) => m[1]!)
    expect(strings.length).toBe(2)
    expect(strings.every((s) => s.length <= 255)).toBe(true)
    expect(strings.join('')).toBe(long)
  })

  test('a larger set rewrites the existing record and posts the rest', async () => {
    const cf = provider([
      spfList,
      { method: 'POST', path: `${RECORDS}/batch`, fixture: 'dns-records-batch-update.json' },
    ])
    await cf.upsertRecordSet(ZONE, { name: 'example.com', type: 'TXT', ttl: 300, values: ['a', 'b'] })
    const body = replay!.requests[1]?.body as Record<string, unknown[]>
    expect(body.patches).toEqual([
      { id: SPF_RECORD_ID, name: 'example.com', type: 'TXT', ttl: 300, content: '"a"' },
    ])
    expect(body.posts).toEqual([{ name: 'example.com', type: 'TXT', ttl: 300, content: '"b"' }])
  })

  test('MX values go out as content and priority', async () => {
    const cf = provider([
      {
        method: 'GET',
        path: RECORDS,
        query: { 'name.exact': 'mail.example.com', type: 'MX' },
        fixture: 'dns-records-none.json',
      },
      { method: 'POST', path: `${RECORDS}/batch`, fixture: 'dns-records-batch-create.json' },
    ])
    const values = ['10 MX1.example.com.', '20 mx2.example.net']
    expect(
      (await cf.upsertRecordSet(ZONE, { name: 'mail.example.com', type: 'MX', ttl: 600, values })).ok,
    ).toBe(true)
    expect(replay!.requests[1]?.body).toMatchObject({
      posts: [
        { name: 'mail.example.com', type: 'MX', ttl: 600, content: 'mx1.example.com', priority: 10 },
        { name: 'mail.example.com', type: 'MX', ttl: 600, content: 'mx2.example.net', priority: 20 },
      ],
    })
  })

  test('an identical set sends nothing', async () => {
    const cf = provider([spfList])
    const result = await cf.upsertRecordSet(ZONE, {
      name: 'example.com',
      type: 'TXT',
      ttl: 300,
      values: [OLD_SPF],
    })
    expect(result).toEqual({ ok: true, value: undefined })
    expect(replay!.requests.map((r) => r.method)).toEqual(['GET'])
  })

  test('Cloudflare refusing the batch (81053 CNAME clash, 81058 duplicate) is a conflict', async () => {
    for (const answer of ['dns-records-batch-cname-conflict.json', 'dns-records-batch-identical.json']) {
      const cf = provider([
        { method: 'GET', path: RECORDS, fixture: 'dns-records-none.json' },
        { method: 'POST', path: `${RECORDS}/batch`, fixture: answer },
      ])
      const result = await cf.upsertRecordSet(ZONE, {
        name: 'www.example.com',
        type: 'CNAME',
        ttl: 300,
        values: ['x.example.net'],
      })
      expect(result.ok ? 'ok' : result.failure.kind).toBe('conflict')
      await replay!.stop()
    }
  })

  test('an invalid set is refused before any request', async () => {
    const cf = provider([])
    const outside = await cf.upsertRecordSet(ZONE, {
      name: 'example.org',
      type: 'TXT',
      ttl: 300,
      values: ['x'],
    })
    const badMx = await cf.upsertRecordSet(ZONE, {
      name: 'example.com',
      type: 'MX',
      ttl: 300,
      values: ['mx.example.com'],
    })
    expect([outside, badMx].map((r) => (r.ok ? 'ok' : r.failure.kind))).toEqual(['invalid', 'invalid'])
    expect(replay!.requests).toEqual([])
  })
})

describe('deleteRecordSet', () => {
  test('deletes every record of the set in one batch', async () => {
    const cf = provider([
      spfList,
      { method: 'POST', path: `${RECORDS}/batch`, fixture: 'dns-records-batch-delete.json' },
    ])
    expect(await cf.deleteRecordSet(ZONE, 'example.com', 'TXT')).toEqual({ ok: true, value: undefined })
    expect(replay!.requests[1]?.body).toEqual({ deletes: [{ id: SPF_RECORD_ID }] })
  })

  test('deleting a set that does not exist succeeds without a write', async () => {
    const cf = provider([{ method: 'GET', path: RECORDS, fixture: 'dns-records-none.json' }])
    expect(await cf.deleteRecordSet(ZONE, 'gone.example.com', 'TXT')).toEqual({ ok: true, value: undefined })
    expect(replay!.requests.map((r) => r.method)).toEqual(['GET'])
  })
})
