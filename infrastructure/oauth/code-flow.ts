import {
  CodeChallengeMethod,
  Google,
  LinkedIn,
  MicrosoftEntraId,
  OAuth2Client,
  OAuth2RequestError,
  OAuth2Tokens,
  UnexpectedResponseError,
} from 'arctic'
import type { HttpClient } from '../http/guarded-client.ts'
import type { OAuthProviderId } from './oauth-settings.ts'
import type { ProviderEndpoints, TokenAuth } from './provider-profiles.ts'

// The authorization-code flow (RFC 6749 §4.1). arctic builds the authorization URLs (the vendor's
// class for the vendor's endpoints, its generic OAuth2Client for endpoints pointed elsewhere: a
// stand-in, the tests' local provider, a self-hosted IdP). The code is exchanged here, through the
// guarded client (docs/outbound-http.md), since arctic sends its token requests with the global
// fetch and takes no other: the same request arctic sends, with the client's size cap, deadlines
// and refusal of redirects (the client secret is for the token endpoint only).

export interface CodeFlowClient {
  authorizationUrl(input: { state: string; verifier: string; nonce: string; scopes: string[] }): URL
  exchange(code: string, verifier: string): Promise<OAuth2Tokens>
}

export interface CodeFlowSettings {
  id: OAuthProviderId
  clientId: string
  clientSecret: string
  redirectUri: string
  tenant: string | null
  endpoints: ProviderEndpoints
  /** True: the endpoints are the vendor's defaults, so the vendor's arctic class applies. */
  vendorEndpoints: boolean
  pkce: boolean
  tokenAuth: TokenAuth
  http: HttpClient
}

export function codeFlowClient(settings: CodeFlowSettings): CodeFlowClient {
  const authorizationUrl =
    (settings.vendorEndpoints ? vendorAuthorization(settings) : null) ?? genericAuthorization(settings)
  return {
    authorizationUrl,
    exchange: (code, verifier) => exchangeCode(settings, code, settings.pkce ? verifier : null),
  }
}

type AuthorizationUrl = CodeFlowClient['authorizationUrl']

function genericAuthorization(settings: CodeFlowSettings): AuthorizationUrl {
  const client = new OAuth2Client(settings.clientId, settings.clientSecret, settings.redirectUri)
  return ({ state, verifier, nonce, scopes }) => {
    const url = settings.pkce
      ? client.createAuthorizationURLWithPKCE(
          settings.endpoints.authorization,
          state,
          CodeChallengeMethod.S256,
          verifier,
          scopes,
        )
      : client.createAuthorizationURL(settings.endpoints.authorization, state, scopes)
    url.searchParams.set('nonce', nonce)
    return url
  }
}

function vendorAuthorization(settings: CodeFlowSettings): AuthorizationUrl | null {
  const { clientId, clientSecret, redirectUri } = settings
  const withNonce = (url: URL, nonce: string) => {
    url.searchParams.set('nonce', nonce)
    return url
  }
  switch (settings.id) {
    case 'google': {
      const google = new Google(clientId, clientSecret, redirectUri)
      return ({ state, verifier, nonce, scopes }) =>
        withNonce(google.createAuthorizationURL(state, verifier, scopes), nonce)
    }
    case 'microsoft': {
      const entra = new MicrosoftEntraId(settings.tenant ?? 'common', clientId, clientSecret, redirectUri)
      return ({ state, verifier, nonce, scopes }) =>
        withNonce(entra.createAuthorizationURL(state, verifier, scopes), nonce)
    }
    case 'linkedin': {
      const linkedin = new LinkedIn(clientId, clientSecret, redirectUri)
      // LinkedIn ignores the nonce (its ID tokens do not carry one); it is sent all the same.
      return ({ state, nonce, scopes }) => withNonce(linkedin.createAuthorizationURL(state, scopes), nonce)
    }
    case 'oidc':
      return null
  }
}

/**
 * The token request (RFC 6749 §4.1.3) as arctic's classes send it: the client authenticated with
 * HTTP Basic (§2.3.1, Google, Microsoft and most IdPs) or with the secret in the body
 * (client_secret_post, OIDC Core §9: LinkedIn and a few others); answered like arctic answers.
 */
async function exchangeCode(
  settings: CodeFlowSettings,
  code: string,
  codeVerifier: string | null,
): Promise<OAuth2Tokens> {
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: settings.redirectUri,
  })
  if (codeVerifier !== null) body.set('code_verifier', codeVerifier)
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
    'user-agent': 'dmarcwatch',
  }
  if (settings.tokenAuth === 'client_secret_basic') {
    const credentials = Buffer.from(`${settings.clientId}:${settings.clientSecret}`).toString('base64')
    headers.authorization = `Basic ${credentials}`
  } else {
    body.set('client_id', settings.clientId)
    body.set('client_secret', settings.clientSecret)
  }
  const response = await settings.http.request(settings.endpoints.token, {
    method: 'POST',
    headers,
    body: body.toString(),
    redirect: 'error',
  })
  let data: unknown = null
  try {
    data = response.json()
  } catch {}
  const object = typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : null
  if ((response.status === 400 || response.status === 401) && typeof object?.error === 'string') {
    const text = (key: string) => (typeof object[key] === 'string' ? (object[key] as string) : null)
    throw new OAuth2RequestError(object.error, text('error_description'), text('error_uri'), text('state'))
  }
  if (response.status !== 200 || object === null) throw new UnexpectedResponseError(response.status)
  return new OAuth2Tokens(object)
}
