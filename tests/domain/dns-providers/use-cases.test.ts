import { describe, expect, test } from 'bun:test'
import { parseCredentials } from '../../../domain/dns-providers/credentials.ts'
import { dnsValues } from '../../../domain/dns-providers/read-back.ts'
import {
  type Connection,
  type ConnectionStore,
  longestZone,
  resolveConnection,
} from '../../../domain/dns-providers/use-cases.ts'
import { diffSets } from '../../../domain/dns-providers/writes.ts'

// The pure parts of connections and writes: credentials split into settings and the secret, the
// `{provider}` path reference, the zone a domain is written in, diffs and DNS answers compared.

describe('credentials', () => {
  test('each kind: settings to show, one secret to seal', () => {
    expect(parseCredentials('powerdns', { base_url: ' https://dns.example.net ', api_key: 'k' })).toEqual({
      ok: true,
      value: {
        settings: { provider: 'powerdns', base_url: 'https://dns.example.net', server_id: 'localhost' },
        secret: 'k',
      },
    })
    expect(parseCredentials('cloudflare', { api_token: 't', account_id: 'A'.repeat(32) })).toMatchObject({
      ok: true,
      value: { settings: { base_url: null, account_id: 'a'.repeat(32) }, secret: 't' },
    })
    expect(
      parseCredentials('rfc2136', {
        server: 'ns1.example.net:5353',
        zones: ['Example.COM.', 'example.com', 'example.org'],
        key_name: 'dmarcwatch.',
        key_secret: 'c2VjcmV0',
      }),
    ).toMatchObject({
      ok: true,
      value: {
        settings: {
          zones: ['example.com', 'example.org'],
          key_name: 'dmarcwatch',
          key_algorithm: 'hmac-sha256',
          transport: 'tcp',
        },
        secret: 'c2VjcmV0',
      },
    })
  })

  test('every wrong field is named under credentials.', () => {
    const parsed = parseCredentials('rfc2136', {
      server: 'a b',
      zones: [],
      key_algorithm: 'hmac-md5',
      key_secret: 'not base64!',
    })
    expect(parsed.ok).toBe(false)
    if (parsed.ok || parsed.failure.code !== 'validation_failed') return
    expect(Object.keys(parsed.failure.errors).sort()).toEqual([
      'credentials.key_algorithm',
      'credentials.key_name',
      'credentials.key_secret',
      'credentials.server',
      'credentials.zones',
    ])
    expect(parsed.failure.message).toContain('(and 4 more errors)')
    expect(parseCredentials('powerdns', { base_url: 5, api_key: 'k' })).toMatchObject({
      ok: false,
      failure: { errors: { 'credentials.base_url': ['The base_url field must be a string.'] } },
    })
  })
})

const connection = (id: string, provider: Connection['provider']): Connection => ({
  id,
  accountId: 'acct',
  provider,
  name: id,
  settings: { provider: 'cloudflare', base_url: null, account_id: null },
  providerAccount: null,
  createdAt: new Date(0),
  lastVerifiedAt: new Date(0),
})

describe('the {provider} of a path', () => {
  const ids = [
    '11111111-1111-4111-8111-111111111111',
    '22222222-2222-4222-8222-222222222222',
    '33333333-3333-4333-8333-333333333333',
  ]
  const all = [
    connection(ids[0]!, 'powerdns'),
    connection(ids[1]!, 'cloudflare'),
    connection(ids[2]!, 'cloudflare'),
  ]
  const connections = {
    all: async () => all,
    get: async (_: string, id: string) => all.find((c) => c.id === id) ?? null,
  } as unknown as ConnectionStore
  const resolve = (ref: string) => resolveConnection({ connections }, 'acct', ref)

  test('an id, or a kind with exactly one connection', async () => {
    expect(await resolve(ids[1]!.toUpperCase())).toMatchObject({ ok: true, value: { id: ids[1] } })
    expect(await resolve('PowerDNS')).toMatchObject({ ok: true, value: { id: ids[0] } })
    expect(await resolve('cloudflare')).toMatchObject({
      ok: false,
      failure: { code: 'validation_failed', errors: { provider: [expect.stringContaining('2 cloudflare')] } },
    })
    for (const ref of ['rfc2136', 'route53', '44444444-4444-4444-8444-444444444444'])
      expect(await resolve(ref)).toEqual({ ok: false, failure: { code: 'not_found', resource: 'provider' } })
  })
})

test('the longest connected zone holding the domain wins', () => {
  const zones = ['example.com', 'mail.example.com', 'example.co', 'xample.com'].map((name) => ({
    zone: { id: name, name },
  }))
  expect(longestZone('a.mail.example.com', zones)?.zone.name).toBe('mail.example.com')
  expect(longestZone('EXAMPLE.com.', zones)?.zone.name).toBe('example.com')
  expect(longestZone('example.net', zones)).toBeNull()
})

test('diffs and DNS answers in the port’s value form', () => {
  const set = (values: string[], ttl = 300) => ({ name: 'example.com', type: 'TXT', ttl, values })
  expect(diffSets(null, set(['a']))).toEqual({ added: ['a'], removed: [], ttl: { before: null, after: 300 } })
  expect(diffSets(set(['a', 'b']), set(['b', 'c']))).toEqual({ added: ['c'], removed: ['a'], ttl: null })
  expect(dnsValues({ status: 'nxdomain' })).toBeNull()
  expect(dnsValues({ status: 'timeout' })).toBe('unknown')
  expect(
    dnsValues({
      status: 'ok',
      authenticated: false,
      records: [
        { type: 'TXT', strings: ['v=spf1 ', '-all'], ttl: 1 },
        { type: 'MX', preference: 10, exchange: 'MX.Example.com.', ttl: 1 },
        { type: 'AAAA', address: '2001:DB8::1', ttl: 1 },
      ],
    }),
  ).toEqual(['v=spf1 -all', '10 mx.example.com', '2001:db8::1'])
})
