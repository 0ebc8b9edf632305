import type { ForensicReport } from './forensic.ts'

// Failure reports name people: the envelope recipient, the To header, sometimes the sender.
// RFC 7489 §9 (privacy considerations, as does RFC 9991) leaves it to the report consumer to limit
// what it keeps. By default the local part of every address is replaced by a stable token, so the
// same mailbox still groups together but cannot be read back; the domain stays, since that is what
// DMARC is about. Domain code has no crypto: the hash is passed in (an HMAC keyed per account is
// the sensible choice, so tokens cannot be reversed by hashing guessed addresses).

/** Returns a hex digest of its input; the first 8 hex digits make the token. */
export type HexHash = (value: string) => string

const TOKEN = /^redacted-[0-9a-f]{8}$/
// A run of characters that can form a local part, then the domain. Separators that never occur in
// an unquoted local part end the run, so `<a@b>`, `"a@b"`, `mailto:a@b` and `(a@b)` all work.
// The lookbehind starts a local part only where its run begins: tried from every position of a long
// run without `@`, the match took time quadratic in its length (30 s for 250,000 characters).
const ADDRESS =
  /(?<![^\s<>()[\]{},;:"@\\])([^\s<>()[\]{},;:"@\\]+)@([\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?(?:\.[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?)*)/gu
// RFC 8601 §2.3 `ptype.property=value` (smtp.mailfrom=, header.from=) and Received-SPF's
// envelope-from= glue a key onto the address; the key is not part of the local part.
const PROPERTY_PREFIX = /^(?:[a-z0-9-]+\.[a-z0-9-]+|envelope-from|mailfrom|from)=/i

/** Replaces the local part of every address in `text` with `redacted-<8 hex>`. */
export function redactAddresses(text: string, hash: HexHash): string {
  return text.replace(ADDRESS, (whole, run: string, domain: string) => {
    const prefix = PROPERTY_PREFIX.exec(run)?.[0] ?? ''
    const local = run.slice(prefix.length)
    if (local === '' || TOKEN.test(local)) return whole
    const digest = hash(`${local}@${domain}`.toLowerCase()).toLowerCase().slice(0, 8)
    if (!/^[0-9a-f]{8}$/.test(digest)) throw new Error('the redaction hash must return at least 8 hex digits')
    return `${prefix}redacted-${digest}@${domain}`
  })
}

/**
 * The report with the local part of every address in the fields that can hold one replaced:
 * envelope from/to, the original From/To/Subject, Authentication-Results (smtp.mailfrom=),
 * DKIM-Identity and mailto: URIs. The Message-ID is kept (it identifies a message, not a person).
 * Idempotent: tokens are not hashed again.
 */
export function redactLocalParts(report: ForensicReport, hash: HexHash): ForensicReport {
  const redact = (value: string) => redactAddresses(value, hash)
  const maybe = (value: string | null) => (value === null ? null : redact(value))
  return {
    ...report,
    originalMailFrom: maybe(report.originalMailFrom),
    originalRcptTo: report.originalRcptTo.map(redact),
    reportedUris: report.reportedUris.map(redact),
    authenticationResults: report.authenticationResults.map(redact),
    dkimIdentity: maybe(report.dkimIdentity),
    original:
      report.original === null
        ? null
        : {
            ...report.original,
            from: maybe(report.original.from),
            to: maybe(report.original.to),
            subject: maybe(report.original.subject),
          },
    localPartsRedacted: true,
  }
}

/** What gets stored: redacted unless the account opted out of redaction. */
export function forensicReportForStorage(
  report: ForensicReport,
  options: { hash: HexHash; keepLocalParts?: boolean },
): ForensicReport {
  return options.keepLocalParts === true ? report : redactLocalParts(report, options.hash)
}
