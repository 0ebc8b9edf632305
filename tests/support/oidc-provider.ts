import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair } from 'jose'
import Provider from 'oidc-provider'

// A real OpenID provider (panva's certified `oidc-provider`) on a free loopback port, for the OAuth
// login tests. Its development interactions (a login form that takes any account id, a consent
// form) are driven over HTTP with a cookie jar, so the whole authorization-code flow runs headless:
// the tests hand `authorize()` the URL the dashboard redirected to and get back the callback URL
// the provider sends the browser to.

export interface TestClaims {
  email?: string
  email_verified?: boolean
  name?: string
  /** Microsoft Entra ID's "email domain owner verified" optional claim. */
  xms_edov?: boolean
}

export interface TestClient {
  clientId: string
  clientSecret: string
  redirectUri: string
  /** client_secret_basic (Google, Microsoft, generic) or client_secret_post (LinkedIn). */
  auth?: 'client_secret_basic' | 'client_secret_post'
  /** Whether the provider insists on PKCE for this client (LinkedIn-style clients do not send it). */
  pkce?: boolean
}

export interface TestOidcProvider {
  issuer: string
  provider: Provider
  accounts: Map<string, TestClaims>
  /** The method and path of every request the provider received, in order. */
  requests: string[]
  /** Logs in as `accountId` and consents (or denies), following the provider's redirects. */
  authorize(authorizationUrl: string, accountId: string, options?: { deny?: boolean }): Promise<URL>
  close(): Promise<void>
}

export async function startOidcProvider(
  clients: TestClient[],
  options: {
    /**
     * Put the email claims into the ID token too (as Google and LinkedIn do). By default, as the
     * specification has it for the code flow, they come only from the UserInfo endpoint.
     */
    claimsInIdToken?: boolean
  } = {},
): Promise<TestOidcProvider> {
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | null = null
  const requests: string[] = []
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${new URL(req.url ?? '/', 'http://x').pathname}`)
    handler!(req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const signingKey = { ...(await exportJWK(privateKey)), kid: 'test-rs256', alg: 'RS256', use: 'sig' }
  const accounts = new Map<string, TestClaims>()
  const pkceClients = new Set(clients.filter((c) => c.pkce !== false).map((c) => c.clientId))

  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      redirect_uris: [c.redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: c.auth ?? 'client_secret_basic',
    })),
    jwks: { keys: [signingKey] },
    cookies: { keys: ['oidc-provider test cookie key'] },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified', 'xms_edov'],
      profile: ['name'],
    },
    pkce: { required: (_ctx, client) => pkceClients.has(client.clientId) },
    features: { devInteractions: { enabled: true } },
    conformIdTokenClaims: !options.claimsInIdToken,
    ttl: {
      AccessToken: 3600,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
    },
    async findAccount(_ctx, id) {
      const claims = accounts.get(id)
      if (claims === undefined) return undefined
      return { accountId: id, claims: async () => ({ sub: id, ...claims }) }
    },
  })
  // The development interactions announce themselves on every start; the tests know.
  provider.on('server_error', (_ctx, error) => console.error('oidc-provider server_error', error))
  handler = provider.callback()

  const jar = new Map<string, string>()
  const send = async (url: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers)
    if (jar.size > 0) headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '))
    const response = await fetch(url, { ...init, headers, redirect: 'manual' })
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';')
      const eq = pair!.indexOf('=')
      const name = pair!.slice(0, eq).trim()
      const value = pair!.slice(eq + 1).trim()
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(cookie)) jar.delete(name)
      else jar.set(name, value)
    }
    return response
  }

  return {
    issuer,
    provider,
    accounts,
    requests,
    async authorize(authorizationUrl, accountId, options = {}) {
      jar.clear()
      let url = new URL(authorizationUrl)
      // Follows redirects; the interaction pages are answered the way a person would fill them in.
      for (let hop = 0; hop < 20; hop++) {
        if (url.origin !== issuer) return url
        const interaction = /^\/interaction\/([^/]+)$/.exec(url.pathname)
        let response: Response
        if (interaction) {
          const page = await send(url.href)
          const html = await page.text()
          if (page.status !== 200) throw new Error(`interaction page ${page.status}: ${html.slice(0, 300)}`)
          if (options.deny) {
            response = await send(`${issuer}/interaction/${interaction[1]}/abort`)
          } else {
            const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1]
            if (prompt === undefined)
              throw new Error(`no prompt in the interaction page: ${html.slice(0, 300)}`)
            const fields: Record<string, string> = { prompt }
            if (prompt === 'login') Object.assign(fields, { login: accountId, password: 'any' })
            response = await send(url.href, {
              method: 'POST',
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
              body: new URLSearchParams(fields).toString(),
            })
          }
        } else {
          response = await send(url.href)
        }
        const location = response.headers.get('location')
        if (location === null) {
          throw new Error(
            `the provider answered ${response.status}: ${(await response.text()).slice(0, 500)}`,
          )
        }
        url = new URL(location, url)
      }
      throw new Error('too many redirects at the OpenID provider')
    },
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
