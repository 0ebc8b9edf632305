import { parse } from 'tldts'

// docs/api.md: lower-cased, IDNA to A-label, trailing dot removed, a registrable name or a subdomain
// of one; names under the reserved .test and .example TLDs (RFC 2606) are accepted.

const RESERVED_TEST_TLDS = new Set(['test', 'example'])
// Characters that would make the WHATWG URL parser read part of the input as something other than a host.
const NOT_A_HOST = /[\s/\\:@?#%[\]<>^|"`{}]/u
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/

export type DomainNameCheck = { ok: true; name: string } | { ok: false; reason: string }

export function normalizeDomainName(input: string): DomainNameCheck {
  const trimmed = input.trim()
  if (trimmed === '') return { ok: false, reason: 'The domain name is required.' }
  if (trimmed.length > 1024) return { ok: false, reason: 'The domain name is too long.' }
  if (NOT_A_HOST.test(trimmed)) {
    return { ok: false, reason: 'Give a bare domain name such as example.com, without scheme, path or port.' }
  }
  const withoutDot = trimmed.endsWith('.') ? trimmed.slice(0, -1) : trimmed
  let ascii: string
  try {
    // The WHATWG host parser applies UTS #46 processing: case folding, width mapping, IDNA to A-labels.
    ascii = new URL(`http://${withoutDot}/`).hostname
  } catch {
    return { ok: false, reason: 'The domain name is not a valid (internationalised) host name.' }
  }
  if (ascii.length > 253) return { ok: false, reason: 'The domain name is longer than 253 characters.' }
  const labels = ascii.split('.')
  if (labels.length < 2) return { ok: false, reason: 'The domain name needs at least two labels.' }
  if (!labels.every((label) => LABEL.test(label))) {
    return {
      ok: false,
      reason: 'Each label must be 1-63 letters, digits or hyphens and may not start or end with a hyphen.',
    }
  }
  const info = parse(ascii, { allowPrivateDomains: false })
  if (info.isIp) return { ok: false, reason: 'An IP address is not a domain name.' }
  const tld = labels[labels.length - 1]!
  if (!RESERVED_TEST_TLDS.has(tld)) {
    if (!info.isIcann) return { ok: false, reason: `".${tld}" is not a known top-level domain.` }
    if (info.domain === null) {
      return { ok: false, reason: `"${ascii}" is a public suffix, not a registrable domain.` }
    }
  }
  return { ok: true, name: ascii }
}

/**
 * A host name a mail address can end in, IDN as A-labels and lower case, or null: the checks of
 * normalizeDomainName up to its labels, without its registrable-domain rule (INGEST_DOMAIN may be
 * `localhost` or a lab name such as `mail.lan`). An IPv4 address is no such name.
 */
export function hostDomainName(input: string): string | null {
  const trimmed = input.trim().replace(/\.$/, '')
  if (trimmed === '' || NOT_A_HOST.test(trimmed)) return null
  let ascii: string
  try {
    ascii = new URL(`http://${trimmed}/`).hostname
  } catch {
    return null
  }
  const labels = ascii.split('.')
  if (ascii.length > 253 || /^[0-9]+$/.test(labels[labels.length - 1]!)) return null
  return labels.every((label) => LABEL.test(label)) ? ascii : null
}
