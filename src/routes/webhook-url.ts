import type { DnsResolver } from '../../domain/dns/ports.ts'
import { invalid, ok, type Result } from '../../domain/shared/result.ts'
import { checkPublicHost } from '../../infrastructure/http/address-guard.ts'

// The webhook URL as saved (docs/webhooks.md): https, and a host that resolves to public addresses only,
// unless the operator allows private targets (WEBHOOK_ALLOW_PRIVATE, which also allows http). The
// sender checks again on every attempt and pins the address it checked (DNS can change after this
// check); this one exists so a mistake is a clear 400 now instead of failed deliveries later.

export const MAX_WEBHOOK_URL_LENGTH = 2048

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
