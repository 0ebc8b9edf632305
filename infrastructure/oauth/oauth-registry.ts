import { OAuth2RequestError, type OAuth2Tokens } from 'arctic'
import { createRemoteJWKSet, customFetch, type JWTVerifyGetKey } from 'jose'
import type { ProviderClaims } from '../../domain/accounts/oauth-login.ts'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import { asFetch } from '../http/fetch-adapter.ts'
import { createGuardedClient, type HttpClient } from '../http/guarded-client.ts'
import { OutboundError } from '../http/outbound-error.ts'
import { type CodeFlowClient, codeFlowClient } from './code-flow.ts'
import { DiscoveryError, discoverProvider } from './discovery.ts'
import { ClaimsError, type ClaimsFailure, fetchUserinfo, verifyIdToken } from './id-token.ts'
import type { OAuthProviderId, OAuthProviderSettings } from './oauth-settings.ts'
import {
  type ProviderEndpoints,
  type ProviderProfile,
  providerProfile,
  type TokenAuth,
} from './provider-profiles.ts'

// The configured login providers (docs/oauth.md): each builds its authorization URL and, on the
// callback, exchanges the code and turns the ID token (and UserInfo) into verified claims.

export const OAUTH_SCOPES = ['openid', 'email', 'profile']

/** Discovery documents, key sets, token and UserInfo answers are a few KB. */
export const OAUTH_MAX_RESPONSE_BYTES = 256 * 1024
export const OAUTH_TIMEOUT_MS = 10_000

/**
 * The guarded client with the OAuth limits (docs/outbound-http.md). Private addresses are allowed:
 * the endpoints are the operator's configuration (OAUTH_* variables, https or http on loopback, see
 * oauth-settings.ts) or what the operator's issuer publishes, never a user's input, and a
 * self-hosted IdP on an internal address is common. Redirects are never followed.
 */
export function oauthHttpClient(dns: DnsResolver): HttpClient {
  return createGuardedClient({
    dns,
    allowPrivate: true,
    maxResponseBytes: OAUTH_MAX_RESPONSE_BYTES,
    connectTimeoutMs: OAUTH_TIMEOUT_MS,
    totalTimeoutMs: OAUTH_TIMEOUT_MS,
  })
}

export type FlowFailure = 'provider_unreachable' | 'exchange_failed' | ClaimsFailure

export class OAuthFlowError extends Error {
  constructor(
    readonly reason: FlowFailure,
    message: string,
  ) {
    super(message)
    this.name = 'OAuthFlowError'
  }
}

export interface OAuthProvider {
  id: OAuthProviderId
  label: string
  authorizationUrl(flow: { state: string; verifier: string; nonce: string }): Promise<URL>
  /** RFC 9207: an authorization response's `iss` parameter, when present, must name this provider. */
  issuerAccepts(iss: string): Promise<boolean>
  /** Exchanges the code and verifies what comes back; throws OAuthFlowError. */
  finish(input: { code: string; verifier: string; nonce: string; now: Date }): Promise<ProviderClaims>
}

export interface OAuthRegistry {
  /** The configured providers, in the order the login page lists them. */
  providers: { id: OAuthProviderId; label: string }[]
  get(id: string): OAuthProvider | null
}

export function oauthRegistry(
  settings: OAuthProviderSettings[],
  options: { publicUrl: string; dns: DnsResolver },
): OAuthRegistry {
  const http = oauthHttpClient(options.dns)
  const built = new Map(settings.map((s) => [s.id as string, configuredProvider(s, options.publicUrl, http)]))
  return {
    providers: settings.map((s) => ({ id: s.id, label: s.label })),
    get: (id) => built.get(id) ?? null,
  }
}

interface Resolved {
  endpoints: ProviderEndpoints
  client: CodeFlowClient
  keys: JWTVerifyGetKey
  /** What identities from this provider are stored under. */
  identityKey: string
}

function configuredProvider(
  settings: OAuthProviderSettings,
  publicUrl: string,
  http: HttpClient,
): OAuthProvider {
  const overrides = settings.endpoints
  const profile = providerProfile(settings.id, {
    tenant: settings.tenant,
    overridden: overrides.issuer !== null,
  })
  const redirectUri = `${publicUrl}/login/oauth/${settings.id}/callback`
  // Discovery runs on first use, not at start, so an unreachable provider does not stop the service;
  // a failure is not kept, the next login tries again.
  let resolving: Promise<Resolved> | null = null
  const resolved = () => {
    resolving ??= resolve(settings, profile, redirectUri, http).catch((error) => {
      resolving = null
      throw new OAuthFlowError('provider_unreachable', (error as Error).message)
    })
    return resolving
  }

  return {
    id: settings.id,
    label: settings.label,
    async authorizationUrl(flow) {
      return (await resolved()).client.authorizationUrl({ ...flow, scopes: OAUTH_SCOPES })
    },
    async issuerAccepts(iss) {
      return profile.issuerAccepts(iss, (await resolved()).endpoints.issuer, null)
    },
    async finish({ code, verifier, nonce, now }) {
      const { endpoints, client, keys, identityKey } = await resolved()
      const tokens = await exchange(client, code, verifier)
      let idToken: string
      try {
        idToken = tokens.idToken()
      } catch {
        throw new OAuthFlowError(
          'id_token_invalid',
          'the token endpoint sent no ID token (is "openid" allowed?)',
        )
      }
      try {
        const payload = await verifyIdToken({
          idToken,
          keys,
          clientId: settings.clientId,
          issuer: endpoints.issuer,
          issuerAccepts: profile.issuerAccepts,
          nonce,
          nonceEchoed: profile.nonceEchoed,
          now,
        })
        const subject = payload.sub as string
        const needsUserinfo = typeof payload.email !== 'string' || payload.email_verified === undefined
        const userinfo =
          needsUserinfo && endpoints.userinfo !== null
            ? await fetchUserinfo(endpoints.userinfo, tokens.accessToken(), subject, http)
            : null
        const claims = emailClaims(payload, userinfo)
        return {
          provider: identityKey,
          subject,
          email: typeof claims.email === 'string' ? claims.email : null,
          emailVerified: profile.emailVerified(claims),
          name: typeof claims.name === 'string' ? claims.name : null,
        }
      } catch (error) {
        if (error instanceof ClaimsError) throw new OAuthFlowError(error.reason, error.message)
        // E.g. a token response without an access token for UserInfo: the provider's fault, not ours.
        throw new OAuthFlowError('exchange_failed', `unexpected provider answer: ${(error as Error).message}`)
      }
    },
  }
}

/**
 * The ID token's claims completed by UserInfo's (the ID token wins where both have a claim). The
 * email and what vouches for it (email_verified, a provider's own flags) come from one source: a
 * UserInfo answer about another address than the ID token's is not used at all.
 */
function emailClaims(
  payload: Record<string, unknown>,
  userinfo: Record<string, unknown> | null,
): Record<string, unknown> {
  if (userinfo === null) return payload
  if (typeof payload.email === 'string' && userinfo.email !== payload.email) return payload
  if (typeof payload.email !== 'string')
    return { ...userinfo, ...payload, email: userinfo.email, email_verified: userinfo.email_verified }
  return { ...userinfo, ...payload }
}

async function exchange(client: CodeFlowClient, code: string, verifier: string): Promise<OAuth2Tokens> {
  try {
    return await client.exchange(code, verifier)
  } catch (error) {
    if (error instanceof OAuth2RequestError)
      throw new OAuthFlowError(
        'exchange_failed',
        `the token endpoint refused the code: ${error.code}${error.description ? ` (${error.description})` : ''}`,
      )
    // An oversize or redirected answer is an answer, just not a usable one.
    if (error instanceof OutboundError && error.kind !== 'too_large' && error.kind !== 'redirect')
      throw new OAuthFlowError(
        'provider_unreachable',
        `the token endpoint could not be reached: ${error.message}`,
      )
    throw new OAuthFlowError(
      'exchange_failed',
      `the token endpoint answered unexpectedly: ${(error as Error).message}`,
    )
  }
}

async function resolve(
  settings: OAuthProviderSettings,
  profile: ProviderProfile,
  redirectUri: string,
  http: HttpClient,
): Promise<Resolved> {
  const overrides = settings.endpoints
  let endpoints: ProviderEndpoints
  let tokenAuth: TokenAuth = profile.tokenAuth
  const explicit = overrides.authorization !== null && overrides.token !== null && overrides.jwks !== null
  if (overrides.issuer === null && profile.defaults !== null) {
    // The vendor's endpoints, each replaceable on its own.
    endpoints = {
      issuer: profile.defaults.issuer,
      authorization: overrides.authorization ?? profile.defaults.authorization,
      token: overrides.token ?? profile.defaults.token,
      userinfo: overrides.userinfo ?? profile.defaults.userinfo,
      jwks: overrides.jwks ?? profile.defaults.jwks,
    }
  } else if (overrides.issuer !== null && explicit) {
    endpoints = {
      issuer: overrides.issuer,
      authorization: overrides.authorization!,
      token: overrides.token!,
      userinfo: overrides.userinfo,
      jwks: overrides.jwks!,
    }
  } else {
    const issuer = overrides.issuer
    if (issuer === null) throw new DiscoveryError('no issuer to discover the provider from')
    const discovered = await discoverProvider(issuer, http)
    endpoints = {
      issuer,
      authorization: overrides.authorization ?? discovered.authorization,
      token: overrides.token ?? discovered.token,
      userinfo: overrides.userinfo ?? discovered.userinfo,
      jwks: overrides.jwks ?? discovered.jwks,
    }
    if (settings.id === 'oidc') {
      if (discovered.tokenAuth === null)
        throw new DiscoveryError(`${issuer} takes neither client_secret_basic nor client_secret_post`)
      tokenAuth = discovered.tokenAuth
    }
  }
  const vendorEndpoints =
    profile.defaults !== null && Object.values(overrides).every((value) => value === null)
  return {
    endpoints,
    client: codeFlowClient({
      id: settings.id,
      clientId: settings.clientId,
      clientSecret: settings.clientSecret,
      redirectUri,
      tenant: settings.tenant,
      endpoints,
      vendorEndpoints,
      pkce: profile.pkce,
      tokenAuth,
      http,
    }),
    // jose fetches (and refetches, on key rotation) the key set through the guarded client.
    keys: createRemoteJWKSet(new URL(endpoints.jwks), {
      timeoutDuration: OAUTH_TIMEOUT_MS,
      [customFetch]: asFetch(http),
    }),
    // A generic provider's subjects are only unique within its issuer: pointing OAUTH_OIDC_ISSUER
    // at another IdP must not let its subject "1" log in as the old IdP's subject "1".
    identityKey: settings.id === 'oidc' ? `oidc:${endpoints.issuer}` : settings.id,
  }
}
