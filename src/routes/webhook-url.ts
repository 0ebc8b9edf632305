import type { DnsResolver } from '../../domain/dns/ports.ts'
import { invalid, ok, type Result } from '../../domain/shared/result.ts'
import { checkPublicHost } from '../../infrastructure/http/address-guard.ts'

// The webhook URL as saved (docs/webhooks.md): https, and a host that resolves to public addresses only,
// unless the operator allows private targets (WEBHOOK_ALLOW_PRIVATE, which also allows http). The
// sender checks again on every attempt and pins the address it checked (DNS can change after this
// check); this one exists so a mistake is a clear 400 now instead of failed deliveries later.

export const MAX_WEBHOOK_URL_LENGTH = 2048

/**
 * What no receiver can be, with or without WEBHOOK_ALLOW_PRIVATE (docs/webhooks.md, "Address rules").
 * Port 0 is no port a server listens on: every delivery would fail (found by a hostile-input sweep).
 * A user name or password would be sent as Basic authentication, and shown wherever the URL is
 * (GET /webhooks, the delivery log); a receiver checks the signature instead.
 */
function urlProblem(url: URL): string | null {
  if (url.port === '0') return 'The url must not use port 0.'
  if (url.username !== '' || url.password !== '') return 'The url must not contain a user name or password.'
  return null
}

export async function checkWebhookUrl(
  deps: { dns: DnsResolver; allowPrivate: boolean },
  raw: string,
  /** The field a refusal is reported on (chat URLs of the notification settings reuse these rules). */
  field = 'url',
): Promise<Result<string>> {
  const bad = (message: string) => invalid<string>(field, message)
  if (raw.length > MAX_WEBHOOK_URL_LENGTH)
    return bad(`The url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters.`)
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return bad('The url must be an absolute URL, e.g. https://hooks.example.com/dmarcwatch.')
  }
  const httpAllowed = deps.allowPrivate && url.protocol === 'http:'
  if (url.protocol !== 'https:' && !httpAllowed)
    return bad(`The url must use https (got ${url.protocol.replace(/:$/, '')}).`)
  const problem = urlProblem(url)
  if (problem !== null) return bad(problem)
  if (deps.allowPrivate) return ok(url.href)

  const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
  let check: Awaited<ReturnType<typeof checkPublicHost>>
  try {
    check = await checkPublicHost({ dns: deps.dns, allowPrivate: false }, host)
  } catch (error) {
    return bad(`The url's host ${host} could not be resolved: ${(error as Error).message}.`)
  }
  if (!check.ok)
    return bad(
      `The url's host is refused: ${check.reason}. Webhooks only go to hosts whose every address is public (no loopback, private, link-local or metadata addresses).`,
    )
  return ok(url.href)
}
