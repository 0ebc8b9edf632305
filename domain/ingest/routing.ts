// docs/ingestion.md: each account's report address is `<ingest-key>@<INGEST_DOMAIN>`. Reporters and
// forwarders decorate addresses, so the recipient is read leniently: a display name and angle
// brackets, upper case, and a `+tag` sub-address are all accepted.

// The lookbehind starts the local part only where its run begins: tried from every position of a
// long run without `@`, the match took time quadratic in its length (a header of a stranger's mail).
const ADDRESS = /<?(?<![^<>\s@])([^<>\s@]+)@([^<>\s@]+?)\.?>?$/

export function parseAddress(value: string): { local: string; domain: string } | null {
  const match = ADDRESS.exec(value.trim())
  if (!match) return null
  return { local: match[1]!.toLowerCase(), domain: match[2]!.toLowerCase() }
}

/** The ingest key an address routes to, or null when it is not a report address of this service. */
export function ingestKeyOf(address: string, ingestDomain: string): string | null {
  const parsed = parseAddress(address)
  if (parsed === null || parsed.domain !== ingestDomain.toLowerCase()) return null
  const key = parsed.local.split('+')[0]!
  return /^r[a-z2-7]{16}$/.test(key) ? key : null
}

/**
 * The recipient of a message that arrived without an envelope (CLI pipe, IMAP): the first header
 * that names a report address, in the order MTAs set them.
 */
export function recipientFromHeaders(headers: Record<string, string[]>, ingestDomain: string): string | null {
  for (const name of ['delivered-to', 'x-original-to', 'envelope-to', 'to', 'cc']) {
    for (const value of headers[name] ?? []) {
      for (const part of value.split(',')) {
        if (ingestKeyOf(part, ingestDomain) !== null) return part.trim()
      }
    }
  }
  return null
}
