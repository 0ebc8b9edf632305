import { html, type SafeHtml } from './html.ts'
import { layout, type Viewer } from './layout.ts'
import type { DashboardServices } from './services.ts'

// The "Continue with …" links on the login and sign-up pages, and the page after a sign-in that
// turned a password off.

export interface LoginProvider {
  id: string
  label: string
}

/**
 * The providers the login page offers: the configured ones, when there is a secret box to seal the
 * flow cookie with (the composition root always hands one over).
 */
export function loginProviders(s: Pick<DashboardServices, 'config' | 'secrets'>): LoginProvider[] {
  if (s.secrets === undefined) return []
  return s.config.oauth.providers.map(({ id, label }) => ({ id, label }))
}

/** Plain links (a GET starts the flow), so they work without script. */
export function oauthButtons(providers: LoginProvider[], next: string | null): SafeHtml {
  if (providers.length === 0) return html``
  const query = next ? `?next=${encodeURIComponent(next)}` : ''
  return html`<section class="stack" aria-labelledby="oauth-heading">
<h2 id="oauth-heading">Or continue with</h2>
<div class="actions">${providers.map(
    (provider) =>
      html`<a class="button" href="/login/oauth/${provider.id}${query}" rel="nofollow">Continue with ${provider.label}</a>`,
  )}</div>
</section>`
}

export function passwordRemovedView(input: { provider: string; next: string; viewer: Viewer }): SafeHtml {
  const body = html`<h1>Signed in with ${input.provider}</h1>
<div class="notice" role="status">Your ${input.provider} account is now linked to this dmarcwatch account, and its password is turned off.</div>
<p>A password set before the email address was confirmed could have been chosen by someone else who signed up with your address, so it no longer works, and every other session of the account is logged out. To log in with a password again, choose a new one through <a href="/password-reset">Forgot your password?</a>: the link goes to your address.</p>
<p><a class="button" href="${input.next}">Continue</a></p>`
  return layout({ title: 'Signed in', viewer: input.viewer, narrow: true, body })
}
