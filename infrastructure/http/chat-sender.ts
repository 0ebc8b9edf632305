import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { AttemptOutcome } from '../../domain/webhooks/schedule.ts'
import { failedAttempt } from './attempt-outcome.ts'
import { createGuardedClient } from './guarded-client.ts'

// Posts a Slack or Teams message (docs/notifications.md) through the guarded client with the webhook
// limits (docs/outbound-http.md): https only unless private targets are allowed, every address vetted
// and pinned, no redirect followed (the 3xx is the answer), 10 s for the whole exchange, and at most
// 16 KB of the answer read (Slack answers `ok`, Teams workflows 202 with an empty body).

export const CHAT_TIMEOUT_MS = 10_000
const MAX_RESPONSE_BYTES = 16 * 1024
const USER_AGENT = 'dmarcwatch-notifications/1'

export interface ChatSenderDeps {
  dns: DnsResolver
  /** WEBHOOK_ALLOW_PRIVATE: the same operator switch as webhooks. */
  allowPrivate: boolean
  timeoutMs?: number
}

export function chatSender(deps: ChatSenderDeps) {
  const timeoutMs = deps.timeoutMs ?? CHAT_TIMEOUT_MS
  const client = createGuardedClient({
    dns: deps.dns,
    allowPrivate: deps.allowPrivate,
    maxResponseBytes: MAX_RESPONSE_BYTES,
    connectTimeoutMs: timeoutMs,
    totalTimeoutMs: timeoutMs,
  })
  return async (url: string, body: unknown): Promise<{ outcome: AttemptOutcome; latencyMs: number }> => {
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    let target: URL
    try {
      target = new URL(url)
    } catch {
      return { outcome: { kind: 'blocked', reason: 'the URL is not a valid URL' }, latencyMs: 0 }
    }
    if (target.protocol !== 'https:' && !(deps.allowPrivate && target.protocol === 'http:'))
      return {
        outcome: { kind: 'blocked', reason: `chat URLs must use https, not ${target.protocol}` },
        latencyMs: 0,
      }
    try {
      const response = await client.request(target, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': USER_AGENT,
          'Accept-Encoding': 'identity',
        },
        redirect: 'manual',
        overflow: 'truncate',
      })
      return {
        outcome: { kind: 'response', status: response.status },
        latencyMs: Math.round(response.headersAt - started),
      }
    } catch (error) {
      return { outcome: failedAttempt(error), latencyMs: elapsed() }
    }
  }
}
