import { Elysia } from 'elysia'
import type { UnsubscribeTokenStore } from '../../domain/notifications/mail-ports.ts'
import { kindLabel } from '../../domain/notifications/send-mail.ts'
import { unsubscribe, unsubscribeTarget } from '../../domain/notifications/unsubscribe.ts'
import { html } from './html.ts'
import { htmlResponse, layout, messagePage } from './layout.ts'

// /unsubscribe/{token}: the List-Unsubscribe URL of every notification mail (RFC 8058,
// docs/notifications.md "Mail"). No session and no CSRF token: the token is the authority, and a
// mail provider's one-click POST comes from no page of ours. GET only shows a button (mail
// scanners fetch links); POST with `List-Unsubscribe=One-Click` unsubscribes (RFC 8058 §3.1), as
// does the button, which posts the same field.

export interface UnsubscribeDeps {
  tokens: UnsubscribeTokenStore
  now: () => Date
}

const unknown = () =>
  messagePage({
    status: 404,
    title: 'Link not recognised',
    message: 'This unsubscribe link is not one we sent, or it was mistyped. Copy it from the mail again.',
    viewer: null,
  })

/** The one-click body (RFC 8058 §3.1), urlencoded or multipart. */
function isOneClick(body: unknown): boolean {
  if (body instanceof FormData || body instanceof URLSearchParams)
    return body.get('List-Unsubscribe') === 'One-Click'
  if (body !== null && typeof body === 'object')
    return (body as Record<string, unknown>)['List-Unsubscribe'] === 'One-Click'
  if (typeof body === 'string') return new URLSearchParams(body).get('List-Unsubscribe') === 'One-Click'
  return false
}

export function unsubscribePages(deps: UnsubscribeDeps) {
  return new Elysia({ name: 'unsubscribe', detail: { hide: true } })
    .get('/unsubscribe/:token', async ({ params }) => {
      const target = await unsubscribeTarget(deps, params.token)
      if (target === null) return unknown()
      const body = html`<h1>Unsubscribe</h1>
<p>Stop sending ${kindLabel(target.kind)} to <strong>${target.recipient}</strong>?</p>
<form method="post" action="/unsubscribe/${params.token}">
<input type="hidden" name="List-Unsubscribe" value="One-Click">
<button type="submit">Unsubscribe</button>
</form>`
      return htmlResponse(layout({ title: 'Unsubscribe', viewer: null, narrow: true, body }))
    })
    .post('/unsubscribe/:token', async ({ params, body }) => {
      if (!isOneClick(body))
        return messagePage({
          status: 400,
          title: 'Request refused',
          message: 'An unsubscribe request carries List-Unsubscribe=One-Click (RFC 8058).',
          viewer: null,
        })
      const target = await unsubscribe(deps, params.token)
      if (target === null) return unknown()
      return htmlResponse(
        layout({
          title: 'Unsubscribed',
          viewer: null,
          narrow: true,
          body: html`<h1>Unsubscribed</h1><p>No more ${kindLabel(target.kind)} will be sent to <strong>${target.recipient}</strong>.</p>`,
        }),
      )
    })
}
