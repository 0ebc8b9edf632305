import { invalid, ok, type Result } from '../../domain/shared/result.ts'

// The IMAP_URL of the mailbox the poller reads (RFC 5092's imap:// scheme, and imaps://).

export interface ImapTarget {
  host: string
  port: number
  secure: boolean
  user: string
  pass: string
  folder: string
}

export function parseImapUrl(url: string): Result<ImapTarget> {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return invalid('url', 'The IMAP URL is not a valid URL.')
  }
  if (parsed.protocol !== 'imap:' && parsed.protocol !== 'imaps:') {
    return invalid('url', 'The IMAP URL must start with imap:// or imaps://.')
  }
  if (!parsed.hostname) return invalid('url', 'The IMAP URL has no host.')
  if (!parsed.username) return invalid('url', 'The IMAP URL has no user name.')
  const secure = parsed.protocol === 'imaps:'
  try {
    // RFC 5092 allows `user;AUTH=…`; only plain LOGIN is supported, so the mechanism is dropped.
    const user = decodeURIComponent(parsed.username.replace(/;AUTH=.*$/i, ''))
    const folder = decodeURIComponent(parsed.pathname.replace(/^\/+/, '')) || 'INBOX'
    return ok({
      host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: parsed.port ? Number(parsed.port) : secure ? 993 : 143,
      secure,
      user,
      pass: decodeURIComponent(parsed.password),
      folder,
    })
  } catch {
    return invalid('url', 'The IMAP URL has an invalid percent-encoding.')
  }
}
