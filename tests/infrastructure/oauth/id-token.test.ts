import { describe, expect, test } from 'bun:test'
import { createLocalJWKSet, exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose'
import { ClaimsError, verifyIdToken } from '../../../infrastructure/oauth/id-token.ts'
import { oauthRegistry } from '../../../infrastructure/oauth/oauth-registry.ts'
import type { OAuthProviderSettings } from '../../../infrastructure/oauth/oauth-settings.ts'
import {
  MICROSOFT_CONSUMER_TENANT,
  providerProfile,
} from '../../../infrastructure/oauth/provider-profiles.ts'
import { memoryDns } from '../../support/memory-dns.ts'

// The ID token checks of OIDC Core §3.1.3.7 one by one, with tokens signed here; the vendors'
// authorization URLs as arctic's provider classes build them; the issuer and email rules of the
// provider profiles. No network: the end-to-end flow is tests/dashboard/oauth.test.ts.

const ISSUER = 'https://idp.example.org'
const CLIENT = 'dw-client'
const NOW = new Date('2026-05-01T12:00:00Z')
const epoch = (date: Date) => Math.floor(date.getTime() / 1000)

const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true })
const keys = createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256' }] })
const stranger = (await generateKeyPair('RS256')).privateKey

function sign(claims: JWTPayload, key: CryptoKey = privateKey, kid = 'k1'): Promise<string> {
  const defaults = {
    iss: ISSUER,
    aud: CLIENT,
    sub: 'subject-1',
    nonce: 'n-1',
    iat: epoch(NOW),
    exp: epoch(NOW) + 300,
  }
  return new SignJWT({ ...defaults, ...claims }).setProtectedHeader({ alg: 'RS256', kid }).sign(key)
}

const verify = (idToken: string, options: { nonceEchoed?: boolean; nonce?: string } = {}) =>
  verifyIdToken({
    idToken,
    keys,
    clientId: CLIENT,
    issuer: ISSUER,
    issuerAccepts: (iss, expected) => iss === expected,
    nonce: options.nonce ?? 'n-1',
    nonceEchoed: options.nonceEchoed ?? true,
    now: NOW,
  })

async function reason(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
    return 'accepted'
  } catch (error) {
    if (error instanceof ClaimsError) return error.reason
    throw error
  }
}

describe('verifyIdToken', () => {
  test('a token signed by the published key, for this client, in time and with the nonce passes', async () => {
    const payload = await verify(await sign({ email: 'a@example.com' }))
    expect(payload).toMatchObject({ sub: 'subject-1', email: 'a@example.com' })
  })

  test('signature, algorithm, issuer, audience, azp and expiry are each enforced', async () => {
    expect(await reason(verify(await sign({}, stranger)))).toBe('id_token_invalid')
    expect(await reason(verify(await sign({}, stranger, 'unknown-kid')))).toBe('id_token_invalid')
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(
      JSON.stringify({
        iss: ISSUER,
        aud: CLIENT,
        sub: 's',
        nonce: 'n-1',
        iat: epoch(NOW),
        exp: epoch(NOW) + 60,
      }),
    ).toString('base64url')}.`
    expect(await reason(verify(unsigned))).toBe('id_token_invalid')
    // HS256 keyed with something the attacker knows is never accepted, whatever the key.
    const hs = await new SignJWT({ iss: ISSUER, aud: CLIENT, sub: 's', nonce: 'n-1' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt(epoch(NOW))
      .setExpirationTime(epoch(NOW) + 60)
      .sign(new TextEncoder().encode('a client secret known to many'))
    expect(await reason(verify(hs))).toBe('id_token_invalid')
    expect(await reason(verify(await sign({ iss: 'https://evil.example' })))).toBe('id_token_invalid')
    expect(await reason(verify(await sign({ aud: 'another-client' })))).toBe('id_token_invalid')
    expect(await reason(verify(await sign({ aud: [CLIENT, 'another'] })))).toBe('id_token_invalid')
    expect(await reason(verify(await sign({ aud: [CLIENT, 'another'], azp: CLIENT })))).toBe('accepted')
    expect(await reason(verify(await sign({ azp: 'another-client' })))).toBe('id_token_invalid')
    expect(await reason(verify(await sign({ exp: epoch(NOW) - 120 })))).toBe('id_token_invalid')
    // Within the minute of clock skew allowed.
    expect(await reason(verify(await sign({ exp: epoch(NOW) - 30 })))).toBe('accepted')
    expect(await reason(verify(await sign({ sub: '' })))).toBe('id_token_invalid')
  })

  test('the nonce must be this flow’s; only a provider that never echoes it may leave it out', async () => {
    expect(await reason(verify(await sign({ nonce: 'n-other' })))).toBe('nonce_mismatch')
    expect(await reason(verify(await sign({ nonce: undefined })))).toBe('nonce_mismatch')
    expect(await reason(verify(await sign({ nonce: undefined }), { nonceEchoed: false }))).toBe('accepted')
    expect(await reason(verify(await sign({ nonce: 'n-other' }), { nonceEchoed: false }))).toBe(
      'nonce_mismatch',
    )
  })
})

const settings = (id: OAuthProviderSettings['id'], tenant: string | null = null): OAuthProviderSettings => ({
  id,
  label: id,
  clientId: `${id}-client`,
  clientSecret: 'secret',
  tenant,
  endpoints: { issuer: null, authorization: null, token: null, userinfo: null, jwks: null },
})

describe('the vendors’ authorization URLs (arctic’s provider classes)', () => {
  const registry = oauthRegistry(
    [settings('google'), settings('microsoft', 'contoso.example'), settings('linkedin')],
    {
      publicUrl: 'https://dmarc.example.org',
      dns: memoryDns({}),
    },
  )
  const flow = { state: 'state-1', verifier: 'v'.repeat(43), nonce: 'nonce-1' }

  test('Google and Microsoft: PKCE S256, state, nonce, the redirect URI of this service', async () => {
    const google = await registry.get('google')!.authorizationUrl(flow)
    expect(`${google.origin}${google.pathname}`).toBe('https://accounts.google.com/o/oauth2/v2/auth')
    const microsoft = await registry.get('microsoft')!.authorizationUrl(flow)
    expect(`${microsoft.origin}${microsoft.pathname}`).toBe(
      'https://login.microsoftonline.com/contoso.example/oauth2/v2.0/authorize',
    )
    for (const [id, url] of [
      ['google', google],
      ['microsoft', microsoft],
    ] as const) {
      expect(Object.fromEntries(url.searchParams)).toMatchObject({
        response_type: 'code',
        client_id: `${id}-client`,
        redirect_uri: `https://dmarc.example.org/login/oauth/${id}/callback`,
        state: 'state-1',
        nonce: 'nonce-1',
        scope: 'openid email profile',
        code_challenge_method: 'S256',
      })
      // RFC 7636 appendix B: BASE64URL(SHA256(verifier)).
      const digest = new Bun.CryptoHasher('sha256').update(flow.verifier).digest('base64url')
      expect(url.searchParams.get('code_challenge')).toBe(digest)
    }
  })

  test('LinkedIn: no PKCE (its web sign-in does not take it)', async () => {
    const url = await registry.get('linkedin')!.authorizationUrl(flow)
    expect(`${url.origin}${url.pathname}`).toBe('https://www.linkedin.com/oauth/v2/authorization')
    expect(url.searchParams.get('state')).toBe('state-1')
    expect(url.searchParams.has('code_challenge')).toBe(false)
    expect(registry.get('oidc')).toBeNull()
  })
})

describe('provider rules', () => {
  const tenantId = '72f988bf-86f1-41af-91ab-2d7cd011db47'
  const iss = (tid: string) => `https://login.microsoftonline.com/${tid}/v2.0`

  test('Microsoft multi-tenant endpoints accept the issuer of the token’s own tenant', () => {
    const common = providerProfile('microsoft', { tenant: 'common', overridden: false })
    const expected = iss('common')
    expect(common.issuerAccepts(iss(tenantId), expected, { tid: tenantId })).toBe(true)
    expect(common.issuerAccepts(iss(tenantId), expected, { tid: MICROSOFT_CONSUMER_TENANT })).toBe(false)
    expect(common.issuerAccepts('https://evil.example/v2.0', expected, { tid: tenantId })).toBe(false)
    const organizations = providerProfile('microsoft', { tenant: 'organizations', overridden: false })
    expect(
      organizations.issuerAccepts(iss(MICROSOFT_CONSUMER_TENANT), expected, {
        tid: MICROSOFT_CONSUMER_TENANT,
      }),
    ).toBe(false)
    const consumers = providerProfile('microsoft', { tenant: 'consumers', overridden: false })
    expect(consumers.issuerAccepts(iss(tenantId), expected, { tid: tenantId })).toBe(false)
    // A tenant named by id: that tenant's issuer only.
    const single = providerProfile('microsoft', { tenant: tenantId, overridden: false })
    expect(single.issuerAccepts(iss(tenantId), iss(tenantId), { tid: tenantId })).toBe(true)
    expect(single.issuerAccepts(iss(MICROSOFT_CONSUMER_TENANT), iss(tenantId), {})).toBe(false)
  })

  test('emails count as verified by the provider’s own rules', () => {
    const microsoft = providerProfile('microsoft', { tenant: 'common', overridden: false })
    expect(microsoft.emailVerified({ email: 'a@contoso.example', tid: tenantId })).toBe(false)
    expect(microsoft.emailVerified({ email: 'a@contoso.example', tid: tenantId, xms_edov: true })).toBe(true)
    expect(microsoft.emailVerified({ email: 'a@outlook.example', tid: MICROSOFT_CONSUMER_TENANT })).toBe(true)
    const google = providerProfile('google', { tenant: null, overridden: false })
    expect(google.emailVerified({ email_verified: true })).toBe(true)
    expect(google.emailVerified({ email_verified: 'true' })).toBe(true)
    expect(google.emailVerified({ email_verified: false })).toBe(false)
    expect(google.emailVerified({})).toBe(false)
    expect(google.issuerAccepts('accounts.google.com', 'https://accounts.google.com', null)).toBe(true)
  })
})
