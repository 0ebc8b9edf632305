import { hashToken } from '../accounts/api-token.ts'
import type { UnsubscribeTarget, UnsubscribeTokenStore } from './mail-ports.ts'

// The one-click unsubscribe of notification mail (RFC 8058, docs/notifications.md "Mail"): the
// token in List-Unsubscribe stands for one recipient and kind of one account; no sign-in needed.
// Only a POST unsubscribes: a GET (a mail scanner prefetching links, a person opening the link)
// shows what the button would do (RFC 8058 §3.1, §4).

/** The shape of our tokens (32 random bytes, base64url): anything else is refused unread. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/

export async function unsubscribeTarget(
  deps: { tokens: UnsubscribeTokenStore },
  token: string,
): Promise<UnsubscribeTarget | null> {
  return TOKEN.test(token) ? deps.tokens.find(hashToken(token)) : null
}

export async function unsubscribe(
  deps: { tokens: UnsubscribeTokenStore; now: () => Date },
  token: string,
): Promise<UnsubscribeTarget | null> {
  return TOKEN.test(token) ? deps.tokens.unsubscribe(hashToken(token), deps.now()) : null
}
