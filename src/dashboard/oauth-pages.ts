import { encodeBase64urlNoPadding } from '@oslojs/encoding'
import { Elysia } from 'elysia'
import {
  logInWithProvider,
  type OAuthRefusal,
  type ProviderClaims,
} from '../../domain/accounts/oauth-login.ts'
import { resumeSession, sameSecret } from '../../domain/accounts/sessions.ts'
import { normalizeEmail } from '../../domain/shared/email-address.ts'
import type { SecretBox } from '../../infrastructure/crypto/secret-box.ts'
import { FLOW_LIFETIME_MS, openFlow, sealFlow } from '../../infrastructure/oauth/flow-cookie.ts'
import {
  type FlowFailure,
  OAuthFlowError,
  type OAuthProvider,
  oauthRegistry,
} from '../../infrastructure/oauth/oauth-registry.ts'
import { safeNext, sessionCookies } from '../../plugins/session.ts'
import { anonymousCsrf } from './auth-pages.ts'
import { loginView } from './auth-views.ts'
import { clientFacts, limited, loginPolicy, param, publicPolicy } from './guards.ts'
import { htmlResponse, messagePage, redirectTo } from './layout.ts'
import { loginProviders, passwordRemovedView } from './oauth-views.ts'
import type { DashboardServices } from './services.ts'

// OAuth 2.0 / OpenID Connect sign-in (issue #8, docs/oauth.md).
// GET /login/oauth/:provider sends the browser to the provider with a fresh state (CSRF, RFC 6749
// §10.12), PKCE S256 challenge (RFC 7636) and nonce (OIDC Core §15.5.2), kept in a sealed,
// short-lived cookie; GET /login/oauth/:provider/callback checks them, exchanges the code,
// verifies the ID token and logs the user in on a new session, like a password login.

type Refusal = FlowFailure | OAuthRefusal | 'flow_mismatch' | 'denied' | 'provider_error'

function refusalMessage(reason: Refusal, provider: string): string {
  switch (reason) {
    case 'denied':
      return `You did not allow dmarcwatch to use your ${provider} account, so you are not logged in.`
    case 'provider_error':
      return `${provider} could not sign you in. Try again.`
    case 'flow_mismatch':
      return 'This sign-in could not be matched to this browser: it took more than 10 minutes, or was started in another tab or browser. Try again.'
    case 'provider_unreachable':
      return `${provider} cannot be reached right now. Try again later, or log in with your password.`
    case 'exchange_failed':
    case 'id_token_invalid':
    case 'nonce_mismatch':
    case 'userinfo_failed':
      return `The answer from ${provider} could not be verified, so you are not logged in. Try again.`
    case 'email_unverified':
      return `${provider} has not verified the email address of that account, so it cannot log you in here. Verify the address with ${provider} first, or sign up with email and password.`
    case 'email_missing':
      return `${provider} did not share an email address, which dmarcwatch needs for your account. Allow access to your email address and try again.`
  }
}

export function oauthPages(s: DashboardServices) {
  const registry = oauthRegistry(s.config.oauth.providers, {
    publicUrl: s.config.publicUrl,
    dns: s.checks.dns,
  })
  const cookies = sessionCookies(s.config.publicUrl)
  const flowCookieName = `${cookies.secure ? '__Host-' : ''}dw_oauth`
  const attributes = `Path=/; HttpOnly; SameSite=Lax${cookies.secure ? '; Secure' : ''}`
  // Lax: the callback is a top-level GET navigation from the provider, which carries Lax cookies.
  const flowCookie = (value: string) =>
    `${flowCookieName}=${value}; Max-Age=${FLOW_LIFETIME_MS / 1000}; ${attributes}`
  const clearFlow = `${flowCookieName}=; Max-Age=0; ${attributes}`
  const identities = s.oauthIdentities
  const available = new Set(loginProviders(s).map((p) => p.id))
  if (s.config.oauth.providers.length > 0 && available.size === 0)
    s.logger.warn('OAuth providers are configured but no secret box was handed over: OAuth login is off')
  const providerOf = (id: string): OAuthProvider | null => (available.has(id) ? registry.get(id) : null)
  const notFound = () =>
    messagePage({
      status: 404,
      title: 'Page not found',
      message: 'This sign-in provider is not set up here.',
      viewer: null,
    })

  /** The login page with the problem at the top (the flow cookie is spent either way). */
  const refused = (request: Request, provider: OAuthProvider, reason: Refusal, detail: string | null) => {
    s.logger.warn('oauth login refused', { provider: provider.id, reason, ...(detail ? { detail } : {}) })
    const csrf = anonymousCsrf(s, cookies, request)
    const view = loginView({
      csrf: csrf.token,
      next: null,
      error: refusalMessage(reason, provider.label),
      providers: loginProviders(s),
    })
    return htmlResponse(view, {
      status: reason === 'provider_unreachable' ? 502 : 400,
      cookies: [clearFlow, ...csrf.cookies],
    })
  }

  return new Elysia({ name: 'dashboard:oauth' })
    .get('/login/oauth/:provider', async ({ request, params, query }) => {
      const provider = providerOf(param(params.provider))
      if (provider === null) return notFound()
      const next = safeNext(typeof query.next === 'string' ? query.next : null)
      const now = s.now()
      const current = await resumeSession(s, { id: cookies.read(request, cookies.sessionName), now })
      if (current !== null) return redirectTo(next)
      const random = () => encodeBase64urlNoPadding(s.random(32))
      const flow = { provider: provider.id, state: random(), verifier: random(), nonce: random() }
      let url: URL
      try {
        url = await provider.authorizationUrl(flow)
      } catch (error) {
        if (error instanceof OAuthFlowError) return refused(request, provider, error.reason, error.message)
        throw error
      }
      const sealed = await sealFlow(s.secrets as SecretBox, { ...flow, next, startedAt: now.getTime() })
      return redirectTo(url.href, [flowCookie(sealed)])
    })
    .get('/login/oauth/:provider/callback', async ({ request, params, query, server }) => {
      const provider = providerOf(param(params.provider))
      if (provider === null) return notFound()
      const facts = clientFacts(s, request, server)
      // docs/api.md "Authentication and limits": a public endpoint, limited per client IP like the login form.
      const limit = await limited(s, [{ policy: publicPolicy(s), subject: facts.network }])
      if (limit) return withCookie(limit, clearFlow)
      const text = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : null)
      const now = s.now()
      const flow = await openFlow(s.secrets as SecretBox, cookies.read(request, flowCookieName), now)
      const state = text('state')
      // The state binds the answer to the flow this browser started (constant-time comparison).
      const matches =
        flow !== null && flow.provider === provider.id && state !== null && sameSecret(state, flow.state)
      const error = text('error')
      if (error !== null) {
        // RFC 6749 §4.1.2.1. Only a matching state tells that this browser asked; either way no login.
        const reason = error === 'access_denied' && matches ? 'denied' : 'provider_error'
        return refused(request, provider, reason, `${error}: ${text('error_description') ?? ''}`)
      }
      const code = text('code')
      if (!matches || flow === null || code === null)
        return refused(request, provider, 'flow_mismatch', flow === null ? 'no usable flow cookie' : 'state')
      // RFC 9207 (mix-up defence): when the provider names itself, it must be the expected issuer.
      const iss = text('iss')
      let claims: ProviderClaims
      try {
        if (iss !== null && !(await provider.issuerAccepts(iss)))
          return refused(request, provider, 'flow_mismatch', `iss parameter ${iss}`)
        claims = await provider.finish({ code, verifier: flow.verifier, nonce: flow.nonce, now })
      } catch (error) {
        if (error instanceof OAuthFlowError) return refused(request, provider, error.reason, error.message)
        throw error
      }
      // Per account: the email the provider vouches for, counted together with password logins to
      // that address; else the identity (an unverified email is anyone's to type, and must not let
      // a stranger use up someone else's attempts).
      const verifiedEmail =
        claims.emailVerified && claims.email !== null ? normalizeEmail(claims.email) : null
      const subject = verifiedEmail ?? `${claims.provider}:${claims.subject}`
      const limitEmail = await limited(s, [{ policy: loginPolicy(s), subject }])
      if (limitEmail) return withCookie(limitEmail, clearFlow)
      const result = await logInWithProvider(
        { ...s, identities, passwordRemover: identities },
        { claims, now, ...facts },
      )
      if (!result.ok) return refused(request, provider, result.reason, null)
      const { id, session, outcome, passwordRemoved } = result.value
      s.logger.info('oauth login', { provider: provider.id, outcome, account_id: session.accountId })
      const setCookies = [clearFlow, cookies.session(id, session.expiresAt, now)]
      if (passwordRemoved) {
        const viewer = { email: session.email, csrfToken: session.csrfToken }
        return htmlResponse(passwordRemovedView({ provider: provider.label, next: flow.next, viewer }), {
          cookies: setCookies,
        })
      }
      return redirectTo(flow.next, setCookies)
    })
}

function withCookie(response: Response, cookie: string): Response {
  response.headers.append('set-cookie', cookie)
  return response
}
