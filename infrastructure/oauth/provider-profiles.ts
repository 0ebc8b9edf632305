import type { OAuthProviderId } from './oauth-settings.ts'

// What differs between the providers: their endpoints, whether they take PKCE and echo the nonce,
// how the client authenticates at the token endpoint, which issuers their ID tokens may carry and
// when their email counts as verified. Sources: each vendor's OpenID Connect documentation and
// discovery document (docs/oauth.md).

export interface ProviderEndpoints {
  issuer: string
  authorization: string
  token: string
  userinfo: string | null
  jwks: string
}

export type TokenAuth = 'client_secret_basic' | 'client_secret_post'

export interface ProviderProfile {
  /** The vendor's endpoints; null for the generic provider (discovered from its issuer). */
  defaults: ProviderEndpoints | null
  /** PKCE with S256 (RFC 7636). LinkedIn's web sign-in does not take it. */
  pkce: boolean
  /** Whether ID tokens carry the nonce of the request. LinkedIn's do not. */
  nonceEchoed: boolean
  tokenAuth: TokenAuth
  /** Whether `iss` is one this provider's ID tokens (or RFC 9207 `iss` parameters) may carry. */
  issuerAccepts(iss: string, expected: string, payload: Record<string, unknown> | null): boolean
  /** Whether the provider vouches that the person controls `email`. */
  emailVerified(claims: Record<string, unknown>): boolean
}

/** `email_verified` is a boolean (OIDC Core §5.1); a few providers send the string "true". */
export function standardEmailVerified(claims: Record<string, unknown>): boolean {
  return claims.email_verified === true || claims.email_verified === 'true'
}

const exactIssuer = (iss: string, expected: string) => iss === expected

// Personal Microsoft accounts sign in through this tenant (Microsoft identity platform docs).
export const MICROSOFT_CONSUMER_TENANT = '9188040d-6c67-4c5b-b112-36a304b66dad'
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

function microsoftProfile(tenant: string, overridden: boolean): ProviderProfile {
  const base = `https://login.microsoftonline.com/${tenant}`
  return {
    defaults: {
      issuer: `${base}/v2.0`,
      authorization: `${base}/oauth2/v2.0/authorize`,
      token: `${base}/oauth2/v2.0/token`,
      // The Graph userinfo endpoint adds nothing the ID token lacks (and no verification flag).
      userinfo: null,
      jwks: `${base}/discovery/v2.0/keys`,
    },
    pkce: true,
    nonceEchoed: true,
    tokenAuth: 'client_secret_basic',
    issuerAccepts(iss, expected, payload) {
      if (overridden || GUID.test(tenant)) return iss === expected
      // Multi-tenant endpoints (common, organizations, consumers, or a tenant named by domain):
      // the issuer names the user's own tenant, which must be the token's `tid` when there is one.
      const match = /^https:\/\/login\.microsoftonline\.com\/([0-9a-f-]{36})\/v2\.0$/.exec(iss)
      if (match === null || !GUID.test(match[1]!)) return false
      const tid = match[1]!.toLowerCase()
      if (payload !== null && String(payload.tid ?? '').toLowerCase() !== tid) return false
      if (tenant === 'consumers') return tid === MICROSOFT_CONSUMER_TENANT
      if (tenant === 'organizations') return tid !== MICROSOFT_CONSUMER_TENANT
      return true
    },
    // Entra ID's `email` is whatever a tenant's admin typed and is not verified ("nOAuth"). It counts
    // only with the optional claim xms_edov (the email's domain is verified by the tenant), or for
    // personal Microsoft accounts, whose addresses Microsoft verifies; or an explicit email_verified.
    emailVerified(claims) {
      if (standardEmailVerified(claims)) return true
      if (claims.xms_edov === true || claims.xms_edov === '1' || claims.xms_edov === 'true') return true
      return String(claims.tid ?? '').toLowerCase() === MICROSOFT_CONSUMER_TENANT
    },
  }
}

/** The profile of a configured provider; `overridden` when its issuer was pointed elsewhere. */
export function providerProfile(
  id: OAuthProviderId,
  options: { tenant: string | null; overridden: boolean },
): ProviderProfile {
  switch (id) {
    case 'google':
      return {
        defaults: {
          issuer: 'https://accounts.google.com',
          authorization: 'https://accounts.google.com/o/oauth2/v2/auth',
          token: 'https://oauth2.googleapis.com/token',
          userinfo: 'https://openidconnect.googleapis.com/v1/userinfo',
          jwks: 'https://www.googleapis.com/oauth2/v3/certs',
        },
        pkce: true,
        nonceEchoed: true,
        tokenAuth: 'client_secret_basic',
        // Google's ID tokens carry either form (Google Identity, "Validate an ID token").
        issuerAccepts: (iss, expected) =>
          iss === expected ||
          (!options.overridden &&
            expected === 'https://accounts.google.com' &&
            iss === 'accounts.google.com'),
        emailVerified: standardEmailVerified,
      }
    case 'microsoft':
      return microsoftProfile(options.tenant ?? 'common', options.overridden)
    case 'linkedin':
      return {
        defaults: {
          issuer: 'https://www.linkedin.com/oauth',
          authorization: 'https://www.linkedin.com/oauth/v2/authorization',
          token: 'https://www.linkedin.com/oauth/v2/accessToken',
          userinfo: 'https://api.linkedin.com/v2/userinfo',
          jwks: 'https://www.linkedin.com/oauth/openid/jwks',
        },
        pkce: false,
        nonceEchoed: false,
        // LinkedIn reads the client's credentials from the form body only.
        tokenAuth: 'client_secret_post',
        issuerAccepts: exactIssuer,
        emailVerified: standardEmailVerified,
      }
    case 'oidc':
      return {
        defaults: null,
        pkce: true,
        nonceEchoed: true,
        tokenAuth: 'client_secret_basic',
        issuerAccepts: exactIssuer,
        emailVerified: standardEmailVerified,
      }
  }
}
