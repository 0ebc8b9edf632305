import type { DnsResolver } from '../../domain/dns/ports.ts'
import { type WebhookEvent, webhookBody, webhookDeliveryId } from '../../domain/webhooks/payload.ts'
import type { AttemptOutcome } from '../../domain/webhooks/schedule.ts'
import { markedText } from '../db/damaged-text.ts'
import { failedAttempt } from './attempt-outcome.ts'
import { createGuardedClient, type OutboundResponse } from './guarded-client.ts'
import { signWebhook } from './webhook-signature.ts'

// One webhook delivery attempt (docs/webhooks.md, issue #6): build and sign the body for this attempt's
// time, vet the URL against the SSRF rules, POST it pinned to the vetted address without following
// redirects, and read a bounded piece of the answer for the delivery log. Whatever the receiver does
// (refuse, hang, redirect, stream forever) comes back as an outcome value for classifyAttempt; only
// programming errors (a malformed event id) throw.

/** docs/webhooks.md: an attempt that has no answer after 10 s is a timeout (and retried). */
export const WEBHOOK_TIMEOUT_MS = 10_000
/** Issue #6: at most this much of a response body is read; the rest is cancelled unread. */
export const MAX_RESPONSE_BYTES = 64 * 1024
/** What the delivery log keeps of a response body. */
export const RESPONSE_SNIPPET_BYTES = 1024
export const WEBHOOK_USER_AGENT = 'dmarcwatch-webhooks/1'

export interface WebhookSenderDeps {
  dns: DnsResolver
  /** WEBHOOK_ALLOW_PRIVATE: private addresses and plain http are allowed (tests, closed networks). */
  allowPrivate: boolean
  now: () => Date
  timeoutMs?: number
  /** Test seam for a local HTTPS receiver with its own CA; production uses the system trust store. */
  tls?: { ca?: string }
}

export interface AttemptResult {
  outcome: AttemptOutcome
  /** From the attempt's start (address vetting included) to the response status, or to the failure. */
  latencyMs: number
  status?: number
  /** The first 1 KB (UTF-8 bytes, cut on a character boundary) of the response body. */
  responseSnippet: string
  /** The body went past 64 KB (the rest was not read), or reading it was cut short. */
  responseTruncated: boolean
  /** The attempt's time: the body's `timestamp`. */
  attemptAt: Date
  /** The exact bytes sent and signed (also for a body that was blocked before sending). */
  requestBody: string
}

export async function sendWebhook(
  deps: WebhookSenderDeps,
  input: { url: string; secret: string; event: WebhookEvent },
): Promise<AttemptResult> {
  const deliveryId = webhookDeliveryId(input.event.id)
  const attemptAt = deps.now()
  const requestBody = webhookBody(input.event, attemptAt)
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  const result = (
    outcome: AttemptOutcome,
    latencyMs: number,
    answer?: Partial<AttemptResult>,
  ): AttemptResult => ({
    outcome,
    latencyMs,
    responseSnippet: '',
    responseTruncated: false,
    attemptAt,
    requestBody,
    ...answer,
  })

  const target = vetUrl(deps, input.url)
  if (!target.ok) return result(target.outcome, elapsed())

  const signature = await signWebhook(input.secret, requestBody)
  const timeoutMs = deps.timeoutMs ?? WEBHOOK_TIMEOUT_MS
  const client = createGuardedClient({
    dns: deps.dns,
    allowPrivate: deps.allowPrivate,
    maxResponseBytes: MAX_RESPONSE_BYTES,
    connectTimeoutMs: timeoutMs,
    totalTimeoutMs: timeoutMs,
    ...(deps.tls ? { tls: deps.tls } : {}),
  })
  let response: OutboundResponse
  try {
    response = await client.request(target.url, {
      method: 'POST',
      body: requestBody,
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': WEBHOOK_USER_AGENT,
        'X-Webhook-Event': input.event.type,
        'X-Webhook-Id': deliveryId,
        'X-Webhook-Signature': signature,
        // The body is read only for a snippet: asking for it uncompressed keeps the 64 KB bound a bound
        // on what the receiver sends, not on what a small compressed body expands to.
        'Accept-Encoding': 'identity',
      },
      // A redirect could send the signed body to a host that never passed the address checks: the
      // 3xx is the receiver's answer.
      redirect: 'manual',
      // The status is the receiver's answer; the body only feeds the log. A body that is cut by the
      // timeout or a reset leaves the verdict to the status, so a slow-streaming 200 is delivered.
      overflow: 'truncate',
    })
  } catch (error) {
    return result(failedAttempt(error), elapsed())
  }
  const latencyMs = Math.round(response.headersAt - started)
  // The receiver's bytes go into a text column: a NUL in them failed the attempt's write, and the
  // job with it, on every retry (infrastructure/db/damaged-text.ts).
  const snippet = markedText(firstBytes(response.text(), RESPONSE_SNIPPET_BYTES))
  return result({ kind: 'response', status: response.status }, latencyMs, {
    status: response.status,
    responseSnippet: snippet,
    responseTruncated: response.truncated,
  })
}

type Target = { ok: true; url: URL } | { ok: false; outcome: AttemptOutcome }

const blocked = (reason: string): Target => ({ ok: false, outcome: { kind: 'blocked', reason } })

/**
 * https only, unless the operator allows private targets: then plain http is allowed too, since
 * closed networks and test receivers rarely have certificates. The addresses are vetted by the
 * guarded client (docs/outbound-http.md): every address the host resolves to must be public unless
 * private targets are allowed. A host that does not resolve is a connection error, not a block: DNS
 * failures (timeouts, a record not yet published) pass, and connection errors are retried (docs/webhooks.md).
 */
function vetUrl(deps: WebhookSenderDeps, raw: string): Target {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return blocked('the webhook URL is not a valid URL')
  }
  const httpAllowed = deps.allowPrivate && url.protocol === 'http:'
  if (url.protocol !== 'https:' && !httpAllowed)
    return blocked(`webhook URLs must use https, not ${url.protocol}`)
  return { ok: true, url }
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** At most `limit` UTF-8 bytes of `text`, never splitting a character. */
function firstBytes(text: string, limit: number): string {
  // A UTF-16 unit is at most 3 UTF-8 bytes: short texts need no encoding.
  if (text.length * 3 <= limit) return text
  const bytes = encoder.encode(text)
  if (bytes.length <= limit) return text
  let end = limit
  // Back off over continuation bytes (10xxxxxx) to the start of the character that would be split.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--
  return decoder.decode(bytes.subarray(0, end))
}
