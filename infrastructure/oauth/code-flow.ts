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
import type { OAuthProviderId } from './oauth-settings.ts'
import type { ProviderEndpoints, TokenAuth } from './provider-profiles.ts'

// The authorization-code flow (RFC 6749 §4.1) through arctic. With the vendor's own endpoints the
// vendor's arctic class does the work; with endpoints pointed elsewhere (a stand-in, the tests'
// local provider, a self-hosted IdP) arctic's generic OAuth2Client does the same requests there.

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
}

export function codeFlowClient(settings: CodeFlowSettings): CodeFlowClient {
  const vendor = settings.vendorEndpoints ? vendorClient(settings) : null
  if (vendor !== null) return vendor
  const client = new OAuth2Client(settings.clientId, settings.clientSecret, settings.redirectUri)
  return {
    authorizationUrl({ state, verifier, nonce, scopes }) {
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
    },
    exchange(code, verifier) {
      const codeVerifier = settings.pkce ? verifier : null
      // OAuth2Client authenticates with HTTP Basic (RFC 6749 §2.3.1); a few providers take the
      // credentials only in the body.
      if (settings.tokenAuth === 'client_secret_basic')
        return client.validateAuthorizationCode(settings.endpoints.token, code, codeVerifier)
      return exchangeWithPostedSecret(settings, code, codeVerifier)
    },
  }
}

function vendorClient(settings: CodeFlowSettings): CodeFlowClient | null {
  const { clientId, clientSecret, redirectUri } = settings
  const withNonce = (url: URL, nonce: string) => {
    url.searchParams.set('nonce', nonce)
    return url
  }
  switch (settings.id) {
    case 'google': {
      const google = new Google(clientId, clientSecret, redirectUri)
      return {
        authorizationUrl: ({ state, verifier, nonce, scopes }) =>
          withNonce(google.createAuthorizationURL(state, verifier, scopes), nonce),
        exchange: (code, verifier) => google.validateAuthorizationCode(code, verifier),
      }
    }
    case 'microsoft': {
      const entra = new MicrosoftEntraId(settings.tenant ?? 'common', clientId, clientSecret, redirectUri)
      return {
        authorizationUrl: ({ state, verifier, nonce, scopes }) =>
          withNonce(entra.createAuthorizationURL(state, verifier, scopes), nonce),
        exchange: (code, verifier) => entra.validateAuthorizationCode(code, verifier),
      }
    }
    case 'linkedin': {
      const linkedin = new LinkedIn(clientId, clientSecret, redirectUri)
      return {
        // LinkedIn ignores the nonce (its ID tokens do not carry one); it is sent all the same.
        authorizationUrl: ({ state, nonce, scopes }) =>
          withNonce(linkedin.createAuthorizationURL(state, scopes), nonce),
        exchange: (code) => linkedin.validateAuthorizationCode(code),
      }
    }
    case 'oidc':
      return null
  }
}

/** client_secret_post (OIDC Core §9), answered like arctic answers its own token requests. */
async function exchangeWithPostedSecret(
  settings: CodeFlowSettings,
  code: string,
  codeVerifier: string | null,
): Promise<OAuth2Tokens> {
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: settings.redirectUri,
    client_id: settings.clientId,
    client_secret: settings.clientSecret,
  })
  if (codeVerifier !== null) body.set('code_verifier', codeVerifier)
  const response = await fetch(settings.endpoints.token, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body,
    redirect: 'error',
  })
  let data: unknown = null
  try {
    data = await response.json()
  } catch {}
  const object = typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : null
  if ((response.status === 400 || response.status === 401) && typeof object?.error === 'string') {
    const text = (key: string) => (typeof object[key] === 'string' ? (object[key] as string) : null)
    throw new OAuth2RequestError(object.error, text('error_description'), text('error_uri'), text('state'))
  }
  if (response.status !== 200 || object === null) throw new UnexpectedResponseError(response.status)
  return new OAuth2Tokens(object)
}
