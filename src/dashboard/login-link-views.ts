import { html, type SafeHtml } from './html.ts'
import { csrfField, errorSummary, type FieldErrors, field, layout, type Viewer } from './layout.ts'

// The one-time sign-in link's pages and the first-password form that follows it for a user who has
// no password (docs/dashboard.md, "Signing in without a password").

export function loginLinkView(input: { csrf: string; token: string }): SafeHtml {
  // A button, not a sign-in on GET: link previewers and mail scanners fetch links, and must not spend it.
  const body = html`<h1>Sign in to dmarcwatch</h1>
<p class="lead">This link signs you in once. It stops working when used, and 24 hours after it was made.</p>
<form method="post" action="/login-link/${input.token}" class="stack panel">
${csrfField(input.csrf)}
<div><button type="submit">Sign in</button></div>
</form>`
  return layout({ title: 'Sign in', viewer: null, narrow: true, body })
}

export function loginLinkInvalidView(message: string): SafeHtml {
  const body = html`<h1>This link cannot be used</h1>
<p>${message}</p>
<p>The operator makes a new one with <code>bun run cli account login-link --email you@example.com</code>. <a href="/login">Log in with a password</a></p>`
  return layout({ title: 'Sign-in link', viewer: null, narrow: true, body })
}

export function firstPasswordView(input: {
  viewer: Viewer
  welcome: boolean
  errors?: FieldErrors
}): SafeHtml {
  const errors = input.errors ?? {}
  const body = html`<h1>Choose a password</h1>
${input.welcome ? html`<div class="notice" role="status">You are signed in. Your account has no password yet: choose one now, so that you can log in again without a new link.</div>` : ''}
${errorSummary(errors, { password: 'Password' })}
<form method="post" action="/settings/password" class="stack panel" novalidate>
${csrfField(input.viewer.csrfToken)}
${field({
  name: 'password',
  label: 'Password',
  type: 'password',
  autocomplete: 'new-password',
  hint: 'At least 10 characters. A passphrase of a few words is easy to remember and hard to guess.',
  required: true,
  errors,
})}
<div class="actions"><button type="submit">Set the password</button> <a href="/domains">Later: go to your domains</a></div>
</form>`
  return layout({
    title: 'Choose a password',
    viewer: input.viewer,
    current: '/settings/account',
    narrow: true,
    body,
  })
}
