import { describe, expect, test } from 'bun:test'
import type { ProviderSettings } from '../../../domain/dns-providers/credentials.ts'
import { providerOpener, providerRegistry } from '../../../infrastructure/dns-providers/registry.ts'
import { memoryDns } from '../../support/memory-dns.ts'

// The adapter registry's SSRF rules for user-supplied provider endpoints (the webhooks' rules,
// infrastructure/http/address-guard.ts): https and public addresses only, unless private targets
// are allowed. Nothing here reaches the network: every refusal happens before a request.

const dns = memoryDns({
  'public.example': [{ type: 'A', address: '93.184.216.34', ttl: 300 }],
  'inside.example': [{ type: 'A', address: '10.1.2.3', ttl: 300 }],
  'mixed.example': [
    { type: 'A', address: '93.184.216.34', ttl: 300 },
    { type: 'A', address: '127.0.0.1', ttl: 300 },
  ],
})
const strict = providerRegistry({ dns, allowPrivate: false })
const lax = providerRegistry({ dns, allowPrivate: true })
const pdns = (base_url: string): ProviderSettings => ({
  provider: 'powerdns',
  base_url,
  server_id: 'localhost',
})
const refusal = async (registry: typeof strict, settings: ProviderSettings) => {
  const built = await registry.build(settings, 'secret')
  return built.ok ? null : built.failure
}

describe('provider endpoints', () => {
  test('PowerDNS: https to public addresses only', async () => {
    expect(await refusal(strict, pdns('http://public.example:8081'))).toMatchObject({
      kind: 'invalid',
      message: expect.stringContaining('https'),
    })
    for (const url of [
      'https://127.0.0.1:8081',
      'https://inside.example',
      'https://mixed.example',
      'https://[::1]/',
    ])
      expect((await refusal(strict, pdns(url)))?.message, url).toContain('refused')
    expect(await refusal(strict, pdns('https://user:pw@public.example'))).toMatchObject({ kind: 'invalid' })
    expect(await refusal(strict, pdns('not a url'))).toMatchObject({ kind: 'invalid' })
    expect(await refusal(strict, pdns('https://public.example:8081'))).toBeNull()
  })

  test('private targets (and http) when the operator allows them', async () => {
    expect(await refusal(lax, pdns('http://127.0.0.1:8081'))).toBeNull()
    expect(await refusal(lax, pdns('ftp://127.0.0.1/'))).toMatchObject({ kind: 'invalid' })
  })

  test('Cloudflare: its own API by default, a given base URL checked like any other', async () => {
    const cf = (base_url: string | null): ProviderSettings => ({
      provider: 'cloudflare',
      base_url,
      account_id: null,
    })
    expect(await refusal(strict, cf(null))).toBeNull()
    expect((await refusal(strict, cf('https://inside.example/client/v4')))?.message).toContain('refused')
  })

  test('RFC 2136: the server’s address is checked, names resolved first', async () => {
    const server = (host: string): ProviderSettings => ({
      provider: 'rfc2136',
      server: host,
      zones: ['example.com'],
      key_name: 'k',
      key_algorithm: 'hmac-sha256',
      transport: 'tcp',
    })
    expect((await refusal(strict, server('10.0.0.53')))?.message).toContain('refused')
    expect((await refusal(strict, server('inside.example:5353')))?.message).toContain('refused')
    expect((await refusal(strict, server('[fd00::53]:53')))?.message).toContain('refused')
    expect(await refusal(strict, server('public.example:53'))).toBeNull()
    expect(await refusal(strict, server('public.example:70000'))).toMatchObject({ kind: 'invalid' })
    expect(await refusal(lax, server('127.0.0.1:5353'))).toBeNull()
  })

  test('a stored secret that no longer opens asks for new credentials', async () => {
    const open = providerOpener(strict, async () => {
      throw new Error('bad tag')
    })
    const connection = {
      id: 'c',
      accountId: 'a',
      provider: 'powerdns' as const,
      name: 'x',
      settings: pdns('https://public.example'),
      providerAccount: null,
      createdAt: new Date(0),
      lastVerifiedAt: new Date(0),
    }
    expect(await open(connection)).toMatchObject({ ok: false, failure: { kind: 'bad_credentials' } })
  })
})
