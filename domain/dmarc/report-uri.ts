// DMARC reporting URIs (the values of rua and ruf): RFC 9989 §4.6 and §4.8, RFC 7489 §6.2 and §6.4.

/** One reporting destination as published in rua= or ruf=. */
export interface ReportUri {
  /** The URI as published, size suffix included. */
  raw: string
  /** The URI without the RFC 7489 size suffix. */
  uri: string
  /** Lower-cased scheme, e.g. `mailto` or `https`. */
  scheme: string
  /** For mailto: the percent-decoded address, domain lower-cased; otherwise null. */
  address: string | null
  /** The destination host (mailto domain or URL host) as a lower-case A-label, or null when there is none. */
  host: string | null
  /** RFC 7489 §6.4 `!size` limit in bytes, or null when none was given. */
  maxSizeBytes: number | null
}

export interface ReportUriProblem {
  raw: string
  reason: string
}

export interface ReportUriList {
  uris: ReportUri[]
  problems: ReportUriProblem[]
  /** Whether any URI carried the RFC 7489 `!size` suffix, which RFC 9989 no longer defines. */
  usesSizeLimit: boolean
}

const SCHEME = /^([a-z][a-z0-9+.-]*):(.*)$/is
// RFC 7489 §6.4: dmarc-uri = URI [ "!" 1*DIGIT [ "k" / "m" / "g" / "t" ] ], the units being powers of two.
const SIZE_SUFFIX = /^(\d+)([kmgt])?$/i
const UNIT_SHIFT: Record<string, number> = { k: 10, m: 20, g: 30, t: 40 }
// RFC 3986 characters plus valid percent-escapes; enough to reject spaces, quotes and stray escapes.
const URI_CHARS = /^(?:[a-z0-9\-._~!$&'()*+,;=:@/?#[\]]|%[0-9a-f]{2})+$/i
const LOCAL_PART = /^[^\s@]+$/

/** Parses a comma-separated rua/ruf value. Invalid entries are reported, not thrown. */
export function parseReportUriList(value: string): ReportUriList {
  const uris: ReportUri[] = []
  const problems: ReportUriProblem[] = []
  let usesSizeLimit = false
  // RFC 9989 §4.8: dmarc-urilist = dmarc-uri *(*WSP "," *WSP dmarc-uri)
  for (const part of value.split(',')) {
    const raw = part.trim()
    if (raw === '') {
      problems.push({ raw, reason: 'An empty entry in the URI list (a stray comma).' })
      continue
    }
    const parsed = parseReportUri(raw)
    if ('reason' in parsed) problems.push(parsed)
    else {
      if (parsed.maxSizeBytes !== null) usesSizeLimit = true
      uris.push(parsed)
    }
  }
  return { uris, problems, usesSizeLimit }
}

export function parseReportUri(raw: string): ReportUri | ReportUriProblem {
  let uri = raw
  let maxSizeBytes: number | null = null
  const bang = raw.lastIndexOf('!')
  if (bang >= 0) {
    const size = SIZE_SUFFIX.exec(raw.slice(bang + 1))
    if (size === null) {
      // RFC 9989 §4.8: a literal "!" inside a URI MUST be percent-encoded.
      return { raw, reason: `"${raw}" has a "!" that is neither a size suffix nor percent-encoded.` }
    }
    uri = raw.slice(0, bang)
    const shift = size[2] === undefined ? 0 : UNIT_SHIFT[size[2].toLowerCase()]!
    maxSizeBytes = Number(size[1]) * 2 ** shift
  }
  const scheme = SCHEME.exec(uri)
  if (scheme === null) {
    const hint = uri.includes('@') ? ` Did you mean "mailto:${uri}"?` : ''
    return { raw, reason: `"${raw}" is not a URI: it has no scheme.${hint}` }
  }
  if (!URI_CHARS.test(uri)) {
    return { raw, reason: `"${raw}" contains characters that are not allowed in a URI.` }
  }
  const schemeName = scheme[1]!.toLowerCase()
  const rest = scheme[2]!
  if (schemeName === 'mailto') return parseMailto(raw, uri, rest, maxSizeBytes)
  const host = urlHost(uri)
  return { raw, uri, scheme: schemeName, address: null, host, maxSizeBytes }
}

function parseMailto(
  raw: string,
  uri: string,
  rest: string,
  maxSizeBytes: number | null,
): ReportUri | ReportUriProblem {
  // RFC 6068: mailto:addr-spec[?hfields]; only one address is meaningful for a report destination.
  const addressPart = rest.split('?')[0] ?? ''
  let decoded: string
  try {
    decoded = decodeURIComponent(addressPart)
  } catch {
    return { raw, reason: `"${raw}" has an invalid percent-escape.` }
  }
  const at = decoded.lastIndexOf('@')
  const local = decoded.slice(0, at)
  const host = at > 0 ? toALabel(decoded.slice(at + 1)) : null
  if (at <= 0 || !LOCAL_PART.test(local) || host === null || !host.includes('.')) {
    return { raw, reason: `"${raw}" does not contain a valid email address.` }
  }
  return { raw, uri, scheme: 'mailto', address: `${local}@${host}`, host, maxSizeBytes }
}

function urlHost(uri: string): string | null {
  try {
    const host = new URL(uri).hostname
    return host === '' ? null : host.replace(/\.$/, '')
  } catch {
    return null
  }
}

/** Lower-cases and converts to an A-label through the WHATWG host parser (UTS #46), or null if not a host. */
export function toALabel(name: string): string | null {
  const trimmed = name.trim().replace(/\.$/, '')
  if (trimmed === '' || /[\s/\\:@?#%[\]<>^|"`{}]/u.test(trimmed)) return null
  try {
    const host = new URL(`http://${trimmed}/`).hostname
    return /^[a-z0-9.-]+$/.test(host) ? host : null
  } catch {
    return null
  }
}
