import type { HttpClient } from '../http/guarded-client.ts'
import { acceptableEndpoint } from './oauth-settings.ts'
import type { ProviderEndpoints, TokenAuth } from './provider-profiles.ts'

// OpenID Connect Discovery 1.0: a provider's endpoints from `<issuer>/.well-known/openid-configuration`.

export interface DiscoveredProvider extends ProviderEndpoints {
  /** The client authentication the token endpoint takes, preferring client_secret_basic. */
  tokenAuth: TokenAuth | null
}

export class DiscoveryError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'DiscoveryError'
  }
}

export async function discoverProvider(issuer: string, http: HttpClient): Promise<DiscoveredProvider> {
  // §4: a terminating "/" of the issuer is removed before the well-known path is appended.
  const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`
  let document: Record<string, unknown>
  try {
    // The guarded client's OAuth limits (oauth-registry.ts): size cap, deadlines, no redirects.
    const response = await http.request(url, { headers: { accept: 'application/json' }, redirect: 'error' })
    if (response.status !== 200) throw new DiscoveryError(`${url} answered ${response.status}`)
    const body: unknown = response.json()
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new DiscoveryError(`${url} is not a JSON object`)
    document = body as Record<string, unknown>
  } catch (error) {
    if (error instanceof DiscoveryError) throw error
    throw new DiscoveryError(`${url} could not be read: ${(error as Error).message}`)
  }
  // §4.3: the document's issuer must be exactly the one it was discovered from, or an attacker
  // able to serve this document could impersonate another issuer.
  if (document.issuer !== issuer)
    throw new DiscoveryError(`${url} names the issuer ${String(document.issuer)}, not ${issuer}`)
  const endpoint = (name: string, required: boolean): string | null => {
    const value = document[name]
    if (value === undefined && !required) return null
    if (typeof value !== 'string' || !acceptableEndpoint(value))
      throw new DiscoveryError(`${url}: ${name} is missing or not an https URL`)
    return value
  }
  const methods = document.token_endpoint_auth_methods_supported
  // Absent, the default is client_secret_basic (Discovery §3).
  const supported = Array.isArray(methods) ? methods : ['client_secret_basic']
  const tokenAuth: TokenAuth | null = supported.includes('client_secret_basic')
    ? 'client_secret_basic'
    : supported.includes('client_secret_post')
      ? 'client_secret_post'
      : null
  return {
    issuer,
    authorization: endpoint('authorization_endpoint', true)!,
    token: endpoint('token_endpoint', true)!,
    userinfo: endpoint('userinfo_endpoint', false),
    jwks: endpoint('jwks_uri', true)!,
    tokenAuth,
  }
}
