import type { SecretBox } from '../crypto/secret-box.ts'

// What the callback needs from the request that started a login (state, PKCE verifier, nonce,
// where to go after), kept in the browser rather than in a table: sealed with the service's secret
// box (AES-256-GCM), so it can be neither read (the verifier stays secret) nor forged or altered;
// bound to its purpose by the box's associated data; and short-lived (its own timestamp, not only
// the cookie's Max-Age, which a client can ignore).

export interface OAuthFlow {
  provider: string
  state: string
  verifier: string
  nonce: string
  /** A local path (already checked by safeNext). */
  next: string
  startedAt: number
}

/** Long enough to log in and consent at the provider, short enough that a leaked cookie soon dies. */
export const FLOW_LIFETIME_MS = 10 * 60_000

const CONTEXT = 'oauth-flow:v1'

export function sealFlow(box: SecretBox, flow: OAuthFlow): Promise<string> {
  return box.seal(JSON.stringify(flow), CONTEXT)
}

/** The flow sealed in `sealed`, if it opens, is well formed and has not expired at `now`. */
export async function openFlow(box: SecretBox, sealed: string | null, now: Date): Promise<OAuthFlow | null> {
  if (sealed === null || sealed.length > 2000) return null
  let flow: Partial<OAuthFlow>
  try {
    flow = JSON.parse(await box.open(sealed, CONTEXT))
  } catch {
    return null
  }
  const strings = [flow.provider, flow.state, flow.verifier, flow.nonce, flow.next]
  if (strings.some((value) => typeof value !== 'string') || typeof flow.startedAt !== 'number') return null
  const age = now.getTime() - flow.startedAt
  if (age < -60_000 || age > FLOW_LIFETIME_MS) return null
  return flow as OAuthFlow
}
