// The OAuth / OpenID Connect login providers from the environment (docs/oauth.md). A provider is
// on when its client id and secret are set; its endpoints default to the vendor's and can each be
// pointed elsewhere (a self-hosted stand-in, the tests' local OpenID provider).

export type OAuthProviderId = 'google' | 'microsoft' | 'linkedin' | 'oidc'

export const OAUTH_PROVIDER_IDS: readonly OAuthProviderId[] = ['google', 'microsoft', 'linkedin', 'oidc']

export interface OAuthEndpointOverrides {
  /** Another issuer: the `iss` ID tokens must carry, and where endpoints not given are discovered. */
  issuer: string | null
  authorization: string | null
  token: string | null
  userinfo: string | null
  jwks: string | null
}

export interface OAuthProviderSettings {
  id: OAuthProviderId
  /** What the "Continue with …" button names. */
  label: string
  clientId: string
  clientSecret: string
  /** Microsoft Entra ID: the tenant (`common`, `organizations`, `consumers`, a tenant id or domain). */
  tenant: string | null
  endpoints: OAuthEndpointOverrides
}

const PREFIX: Record<OAuthProviderId, string> = {
  google: 'OAUTH_GOOGLE',
  microsoft: 'OAUTH_MICROSOFT',
  linkedin: 'OAUTH_LINKEDIN',
  oidc: 'OAUTH_OIDC',
}

const LABEL: Record<OAuthProviderId, string> = {
  google: 'Google',
  microsoft: 'Microsoft',
  linkedin: 'LinkedIn',
  oidc: 'single sign-on',
}

const ENDPOINTS = [
  ['issuer', 'ISSUER'],
  ['authorization', 'AUTHORIZATION_URL'],
  ['token', 'TOKEN_URL'],
  ['userinfo', 'USERINFO_URL'],
  ['jwks', 'JWKS_URL'],
] as const

/**
 * Client secrets, codes and tokens travel to these URLs: https only, except plain http on the
 * loopback interface (a local provider in development and tests).
 */
export function acceptableEndpoint(value: string): boolean {
  try {
    const url = new URL(value)
    if (url.username !== '' || url.password !== '' || url.hash !== '') return false
    if (url.protocol === 'https:') return true
    return url.protocol === 'http:' && /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/.test(url.hostname)
  } catch {
    return false
  }
}

export function parseOAuthSettings(
  get: (name: string) => string | undefined,
  problems: string[],
): OAuthProviderSettings[] {
  const providers: OAuthProviderSettings[] = []
  for (const id of OAUTH_PROVIDER_IDS) {
    const prefix = PREFIX[id]
    const clientId = get(`${prefix}_CLIENT_ID`)
    const clientSecret = get(`${prefix}_CLIENT_SECRET`)
    const endpoints: OAuthEndpointOverrides = {
      issuer: null,
      authorization: null,
      token: null,
      userinfo: null,
      jwks: null,
    }
    for (const [key, suffix] of ENDPOINTS) {
      const value = get(`${prefix}_${suffix}`)
      if (value === undefined) continue
      if (acceptableEndpoint(value)) endpoints[key] = value
      else
        problems.push(
          `${prefix}_${suffix} must be an https URL without credentials or fragment (http only on localhost)`,
        )
    }
    const configured = Object.values(endpoints).some((value) => value !== null)
    if (clientId === undefined && clientSecret === undefined) {
      if (configured || (id === 'oidc' && get('OAUTH_OIDC_NAME') !== undefined))
        problems.push(`${prefix}_CLIENT_ID and ${prefix}_CLIENT_SECRET are needed to turn this provider on`)
      continue
    }
    if (clientId === undefined || clientSecret === undefined) {
      problems.push(`${prefix}_CLIENT_ID and ${prefix}_CLIENT_SECRET go together (one is missing)`)
      continue
    }
    if (id === 'oidc' && endpoints.issuer === null) {
      problems.push('OAUTH_OIDC_ISSUER is needed: the OpenID provider is discovered from it')
      continue
    }
    let tenant: string | null = null
    if (id === 'microsoft') {
      tenant = get('OAUTH_MICROSOFT_TENANT') ?? 'common'
      if (!/^[A-Za-z0-9][A-Za-z0-9.-]{0,99}$/.test(tenant))
        problems.push(
          'OAUTH_MICROSOFT_TENANT must be common, organizations, consumers, a tenant id or domain',
        )
    }
    const label = id === 'oidc' ? (get('OAUTH_OIDC_NAME') ?? LABEL.oidc) : LABEL[id]
    if (label.length > 60) problems.push('OAUTH_OIDC_NAME may have at most 60 characters')
    providers.push({ id, label, clientId, clientSecret, tenant, endpoints })
  }
  return providers
}
