import { html, type SafeHtml } from './html.ts'
import { csrfField, errorSummary, type FieldErrors, field, layout } from './layout.ts'
import { type LoginProvider, oauthButtons } from './oauth-views.ts'

// The pages a visitor sees before logging in: login, sign-up, password reset.

const LABELS = { email: 'Email address', password: 'Password', token: 'Reset link' }

function notice(text: string | null): SafeHtml {
  return text === null ? html`` : html`<div class="notice" role="status">${text}</div>`
}

export function loginView(input: {
  csrf: string
  next: string | null
  email?: string
  error?: string
  notice?: string | null
  /** The configured OAuth providers ("Continue with …"). */
  providers?: LoginProvider[]
}): SafeHtml {
  const errors: FieldErrors = input.error ? { form: [input.error] } : {}
  const body = html`<h1>Log in</h1>
${notice(input.notice ?? null)}
${errorSummary(errors, {})}
<form method="post" action="/login" class="stack panel" novalidate>
${csrfField(input.csrf)}
${input.next ? html`<input type="hidden" name="next" value="${input.next}">` : ''}
${field({ name: 'email', label: LABELS.email, type: 'email', value: input.email ?? '', autocomplete: 'username', required: true })}
${field({ name: 'password', label: LABELS.password, type: 'password', autocomplete: 'current-password', required: true })}
<div class="actions"><button type="submit">Log in</button> <a href="/password-reset">Forgot your password?</a></div>
</form>
${oauthButtons(input.providers ?? [], input.next)}
<p>No account yet? <a href="/signup">Sign up</a></p>`
  return layout({ title: 'Log in', viewer: null, narrow: true, body })
}

export function signupView(input: {
  csrf: string
  email?: string
  errors?: FieldErrors
  providers?: LoginProvider[]
  /** A local path to go to once signed up (an invitation link). */
  next?: string | null
}): SafeHtml {
  const errors = input.errors ?? {}
  const body = html`<h1>Create your account</h1>
<p class="lead">Monitor DMARC, SPF and DKIM for your domains.</p>
${errorSummary(errors, LABELS)}
<form method="post" action="/signup" class="stack panel" novalidate>
${csrfField(input.csrf)}
${input.next ? html`<input type="hidden" name="next" value="${input.next}">` : ''}
${field({ name: 'email', label: LABELS.email, type: 'email', value: input.email ?? '', autocomplete: 'email', required: true, errors })}
${field({
  name: 'password',
  label: LABELS.password,
  type: 'password',
  autocomplete: 'new-password',
  hint: 'At least 10 characters. A passphrase of a few words is easy to remember and hard to guess.',
  required: true,
  errors,
})}
<div><button type="submit">Sign up</button></div>
</form>
${oauthButtons(input.providers ?? [], null)}
<p>Already have an account? <a href="/login">Log in</a>, or <a href="/password-reset">reset your password</a>.</p>`
  return layout({ title: 'Sign up', viewer: null, narrow: true, body })
}

export function resetRequestView(input: { csrf: string; sent: boolean }): SafeHtml {
  const body = input.sent
    ? html`<h1>Check your email</h1>
<div class="notice" role="status">If an account exists for that address, we have sent it a link to choose a new password. The link works once, for one hour.</div>
<p><a href="/login">Back to login</a></p>`
    : html`<h1>Reset your password</h1>
<p class="lead">We will email you a link to choose a new one.</p>
<form method="post" action="/password-reset" class="stack panel" novalidate>
${csrfField(input.csrf)}
${field({ name: 'email', label: LABELS.email, type: 'email', autocomplete: 'email', required: true })}
<div><button type="submit">Send the link</button></div>
</form>
<p><a href="/login">Back to login</a></p>`
  return layout({ title: 'Reset your password', viewer: null, narrow: true, body })
}

export function resetFormView(input: { csrf: string; token: string; errors?: FieldErrors }): SafeHtml {
  const errors = input.errors ?? {}
  const body = html`<h1>Choose a new password</h1>
${errorSummary(errors, LABELS)}
<form method="post" action="/password-reset/${input.token}" class="stack panel" novalidate>
${csrfField(input.csrf)}
${field({
  name: 'password',
  label: 'New password',
  type: 'password',
  autocomplete: 'new-password',
  hint: 'At least 10 characters. Every other session of your account is logged out.',
  required: true,
  errors,
})}
<div><button type="submit">Set the password</button></div>
</form>`
  return layout({ title: 'Choose a new password', viewer: null, narrow: true, body })
}

export function resetInvalidView(message: string): SafeHtml {
  const body = html`<h1>This link cannot be used</h1>
<p>${message}</p>
<p><a href="/password-reset">Ask for a new link</a></p>`
  return layout({ title: 'Reset link', viewer: null, narrow: true, body })
}

export function resetMailText(input: { link: string; publicUrl: string }): string {
  return [
    'Someone (hopefully you) asked to reset the password of your dmarcwatch account.',
    '',
    'Choose a new password here (the link works once, for one hour):',
    input.link,
    '',
    'If you did not ask for this, ignore this mail: your password stays as it is.',
    '',
    `dmarcwatch, ${input.publicUrl}`,
  ].join('\n')
}
