import { ASSETS } from './assets.ts'
import { html, type SafeHtml } from './html.ts'

// The page shell (docs/dashboard.md): one layout with a skip link, navigation and the signed-in user;
// every page response carries the Content-Security-Policy and the other protective headers.

export const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // Full referrers only to ourselves: a reset link's token never leaves in a Referer, and
  // same-origin form posts keep their Origin header (the CSRF check reads it).
  'referrer-policy': 'same-origin',
  // Pages show account data: never stored by shared caches or kept on disk.
  'cache-control': 'no-store',
}

export interface Viewer {
  email: string
  csrfToken: string
}

const NAV = [
  { href: '/domains', label: 'Domains' },
  { href: '/reports', label: 'Reports' },
  { href: '/alerts', label: 'Alerts' },
  { href: '/organizations', label: 'Organizations' },
  { href: '/dns-providers', label: 'DNS providers' },
  { href: '/settings/api', label: 'API access' },
  { href: '/settings/notifications', label: 'Notifications' },
  { href: '/settings/account', label: 'Account' },
] as const

export function csrfField(token: string): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${token}">`
}

export function layout(input: {
  title: string
  viewer: Viewer | null
  /** The nav entry to mark as current. */
  current?: string
  narrow?: boolean
  /** Seconds after which the page reloads itself (`<meta http-equiv="refresh">`: no script, CSP-safe). */
  refreshSeconds?: number
  body: SafeHtml
}): SafeHtml {
  const { viewer } = input
  const nav = viewer
    ? html`<nav class="main" aria-label="Main"><ul>${NAV.map(
        (item) =>
          html`<li><a href="${item.href}"${item.href === input.current ? html` aria-current="page"` : ''}>${item.label}</a></li>`,
      )}</ul></nav>
      <div class="who"><span>${viewer.email}</span>
        <form method="post" action="/logout">${csrfField(viewer.csrfToken)}<button type="submit" class="link">Log out</button></form>
      </div>`
    : ''
  return html`<!doctype html>
<html lang="en" class="no-js">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${input.title} · dmarcwatch</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${ASSETS.css.path}">
<script src="${ASSETS.js.path}" defer></script>
${
  input.refreshSeconds === undefined
    ? ''
    : html`<meta http-equiv="refresh" content="${input.refreshSeconds}">
`
}</head>
<body>
<a class="skip" href="#content">Skip to content</a>
<header class="top"><div class="bar"><a class="brand" href="/">dmarcwatch</a>${nav}</div></header>
<main id="content" tabindex="-1"${input.narrow ? html` class="narrow"` : ''}>
${input.body}
</main>
</body>
</html>`
}

export function htmlResponse(
  markup: SafeHtml,
  init: { status?: number; headers?: Record<string, string>; cookies?: string[] } = {},
): Response {
  const headers = new Headers({
    'content-type': 'text/html; charset=utf-8',
    ...SECURITY_HEADERS,
    ...init.headers,
  })
  for (const cookie of init.cookies ?? []) headers.append('set-cookie', cookie)
  return new Response(markup.value, { status: init.status ?? 200, headers })
}

/** 303 See Other: after a form post the browser follows with a GET (post/redirect/get). */
export function redirectTo(location: string, cookies: string[] = []): Response {
  const headers = new Headers({ location, ...SECURITY_HEADERS })
  for (const cookie of cookies) headers.append('set-cookie', cookie)
  return new Response(null, { status: 303, headers })
}

export function messagePage(input: {
  status: number
  title: string
  message: string
  viewer: Viewer | null
  headers?: Record<string, string>
}): Response {
  const body = html`<h1>${input.title}</h1><p>${input.message}</p>
<p><a href="${input.viewer ? '/domains' : '/login'}">${input.viewer ? 'Back to your domains' : 'Go to the login page'}</a></p>`
  return htmlResponse(layout({ title: input.title, viewer: input.viewer, narrow: true, body }), {
    status: input.status,
    headers: input.headers,
  })
}

export type FieldErrors = Record<string, string[]>

/** The error summary at the top of a form: announced, and linked to each field. */
export function errorSummary(errors: FieldErrors, labels: Record<string, string>): SafeHtml {
  const entries = Object.entries(errors).filter(([, messages]) => messages.length > 0)
  if (entries.length === 0) return html``
  return html`<div class="error-summary" role="alert">
<h2>There is a problem</h2>
<ul>${entries.map(([field, messages]) =>
    labels[field] === undefined
      ? html`<li>${messages.join(' ')}</li>`
      : html`<li><a href="#${field}">${labels[field]}: ${messages.join(' ')}</a></li>`,
  )}</ul>
</div>`
}

export function field(input: {
  name: string
  label: string
  type?: string
  value?: string
  autocomplete?: string
  hint?: string
  errors?: FieldErrors
  required?: boolean
  extra?: SafeHtml
}): SafeHtml {
  const problems = input.errors?.[input.name] ?? []
  const described = [input.hint ? `${input.name}-hint` : '', problems.length ? `${input.name}-error` : '']
    .filter((id) => id !== '')
    .join(' ')
  return html`<div>
<label for="${input.name}">${input.label}</label>
${input.hint ? html`<p class="hint" id="${input.name}-hint">${input.hint}</p>` : ''}
<input id="${input.name}" name="${input.name}" type="${input.type ?? 'text'}"${
    input.value !== undefined ? html` value="${input.value}"` : ''
  }${input.autocomplete ? html` autocomplete="${input.autocomplete}"` : ''}${
    input.required ? html` required` : ''
  }${described ? html` aria-describedby="${described}"` : ''}${problems.length ? html` aria-invalid="true"` : ''}${input.extra ?? ''}>
${problems.length ? html`<p class="field-error" id="${input.name}-error">${problems.join(' ')}</p>` : ''}
</div>`
}
