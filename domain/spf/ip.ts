// IPv4/IPv6 parsing, formatting and CIDR matching for SPF, without node:net (domain/ has no I/O).
// The grammar is strict on purpose: RFC 7208 §5.6 ip4-network forbids leading zeros and short forms,
// and a record that uses them is a permerror, not something to be guessed at.

export type IpFamily = 4 | 6

export interface IpAddress {
  readonly family: IpFamily
  /** 4 bytes for IPv4, 16 for IPv6, network order. */
  readonly bytes: Uint8Array
}

/**
 * RFC 7208 §5.6: qnum = DIGIT / %x31-39 DIGIT / "1" 2DIGIT / "2" %x30-34 DIGIT / "25" %x30-35, four
 * of them joined by dots. One pass over the characters: this check runs on every record of every
 * aggregate report, where split() and a regular expression per part were measured at ~0.6 µs.
 */
function readIpv4(text: string, bytes: Uint8Array): boolean {
  let part = 0
  let value = 0
  let digits = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 46) {
      if (digits === 0 || part === 3) return false
      bytes[part++] = value
      value = 0
      digits = 0
      continue
    }
    const digit = c - 48
    // No leading zeros (qnum has none): a digit after a lone 0 is refused.
    if (digit < 0 || digit > 9 || (digits === 1 && value === 0)) return false
    value = value * 10 + digit
    if (value > 255) return false
    digits++
  }
  if (digits === 0 || part !== 3) return false
  bytes[3] = value
  return true
}

export function parseIpv4(text: string): IpAddress | null {
  const bytes = new Uint8Array(4)
  return readIpv4(text, bytes) ? { family: 4, bytes } : null
}

const SCRATCH = new Uint8Array(4)

/** A strict dotted quad (the same grammar as parseIpv4), without building the address. */
export const isIpv4 = (text: string): boolean => readIpv4(text, SCRATCH)

/**
 * A strict dotted quad as its 32-bit number, else -1. The rollup of a report keys its sources by it
 * (domain/reports/source-table.ts), in a hash table of numbers. Only canonical text is accepted, so
 * two different strings are never the same number, and the number gives the text back.
 */
export function ipv4Number(text: string): number {
  if (!readIpv4(text, SCRATCH)) return -1
  return ((SCRATCH[0]! * 256 + SCRATCH[1]!) * 256 + SCRATCH[2]!) * 256 + SCRATCH[3]!
}

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48
  const lower = code | 0x20
  return lower >= 97 && lower <= 102 ? lower - 87 : -1
}

const TAIL = new Uint8Array(4)

/**
 * RFC 4291 §2.2 text forms (full, `::`-compressed, IPv4 tail); no zone index, no brackets. One pass
 * over the characters (every check_host() parses its client address): groups of 1-4 hex digits
 * separated by ':', at most one '::', and a dotted quad only as the last two words.
 */
export function parseIpv6(text: string): IpAddress | null {
  // The longest valid form is 45 characters; anything longer is not an address.
  const n = text.length
  if (n < 2 || n > 45) return null
  const words = new Array<number>(8)
  let count = 0
  let gap = -1
  let i = 0
  if (text.charCodeAt(0) === 58) {
    if (text.charCodeAt(1) !== 58) return null
    gap = 0
    i = 2
  }
  while (i < n) {
    const start = i
    let value = 0
    for (
      let digit = hexValue(text.charCodeAt(i));
      digit !== -1 && i < n;
      digit = hexValue(text.charCodeAt(i))
    ) {
      value = value * 16 + digit
      i++
    }
    if (i < n && text.charCodeAt(i) === 46) {
      // An IPv4 tail runs to the end and fills the last two words.
      if (count > 6 || !readIpv4(text.slice(start), TAIL)) return null
      words[count++] = (TAIL[0]! << 8) | TAIL[1]!
      words[count++] = (TAIL[2]! << 8) | TAIL[3]!
      break
    }
    const length = i - start
    if (length === 0 || length > 4 || count === 8) return null
    words[count++] = value
    if (i === n) break
    if (text.charCodeAt(i) !== 58) return null
    i++
    if (text.charCodeAt(i) === 58) {
      if (gap !== -1) return null
      gap = count
      i++
    } else if (i === n) return null
  }
  if (gap === -1 ? count !== 8 : count > 7) return null
  const bytes = new Uint8Array(16)
  // Words before the gap from the start, the ones after it against the end; zeros between.
  const shift = gap === -1 ? 0 : 8 - count
  for (let w = 0; w < count; w++) {
    const at = (gap !== -1 && w >= gap ? w + shift : w) * 2
    bytes[at] = words[w]! >> 8
    bytes[at + 1] = words[w]! & 0xff
  }
  return { family: 6, bytes }
}

/** Either family; IPv4-mapped IPv6 stays IPv6 here (see `unmapIpv4`). */
export function parseIp(text: string): IpAddress | null {
  return text.includes(':') ? parseIpv6(text) : parseIpv4(text)
}

/**
 * RFC 7208 §5 (and §5.6): an IPv4-mapped IPv6 client address (::ffff:a.b.c.d, RFC 4291 §2.5.5.2)
 * MUST be treated as the IPv4 address, so it matches ip4 and A lookups, never ip6 or AAAA.
 */
export function unmapIpv4(ip: IpAddress): IpAddress {
  if (ip.family === 4) return ip
  for (let i = 0; i < 10; i++) if (ip.bytes[i] !== 0) return ip
  if (ip.bytes[10] !== 0xff || ip.bytes[11] !== 0xff) return ip
  return { family: 4, bytes: ip.bytes.slice(12) }
}

/**
 * An address in the one spelling reports are stored in: RFC 5952 for IPv6, an IPv4-mapped one as
 * its IPv4 address (unmapIpv4); null for text that is no address.
 */
export function canonicalIpText(text: string): string | null {
  const ip = parseIp(text)
  return ip === null ? null : formatIp(unmapIpv4(ip))
}

/** Dotted quad, or RFC 5952 canonical IPv6 (lower case, longest zero run compressed). */
export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) return Array.from(ip.bytes).join('.')
  const words: number[] = []
  for (let i = 0; i < 16; i += 2) words.push((ip.bytes[i]! << 8) | ip.bytes[i + 1]!)
  // RFC 5952 §4.2: compress the longest run of two or more zero words, the first one on a tie.
  let bestStart = -1
  let bestLength = 1
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++
      continue
    }
    let end = i
    while (end < 8 && words[end] === 0) end++
    if (end - i > bestLength) {
      bestStart = i
      bestLength = end - i
    }
    i = end
  }
  const hex = words.map((word) => word.toString(16))
  if (bestStart === -1) return hex.join(':')
  const head = hex.slice(0, bestStart).join(':')
  const tail = hex.slice(bestStart + bestLength).join(':')
  return `${head}::${tail}`
}

/** Whether `ip` lies in `network`/`prefix`; different families never match (RFC 7208 §5.6). */
export function inNetwork(ip: IpAddress, network: IpAddress, prefix: number): boolean {
  if (ip.family !== network.family) return false
  const bits = Math.max(0, Math.min(prefix, ip.bytes.length * 8))
  const full = bits >> 3
  for (let i = 0; i < full; i++) if (ip.bytes[i] !== network.bytes[i]) return false
  const rest = bits & 7
  if (rest === 0) return true
  const mask = (0xff << (8 - rest)) & 0xff
  return (ip.bytes[full]! & mask) === (network.bytes[full]! & mask)
}

export function sameIp(a: IpAddress, b: IpAddress): boolean {
  return a.family === b.family && inNetwork(a, b, a.bytes.length * 8)
}

/** The address with every bit after `prefix` cleared: the canonical network address. */
export function maskIp(ip: IpAddress, prefix: number): IpAddress {
  const bytes = ip.bytes.slice()
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, prefix - i * 8))
    bytes[i] = bytes[i]! & ((0xff << (8 - keep)) & 0xff)
  }
  return { family: ip.family, bytes }
}

function nibbles(ip: IpAddress): string[] {
  const out: string[] = []
  for (const byte of ip.bytes) out.push((byte >> 4).toString(16), (byte & 0xf).toString(16))
  return out
}

/**
 * The `i` macro value (RFC 7208 §7.3): the dotted quad, or for IPv6 the 32 nibbles separated by dots.
 * The nibbles are upper case, as the reference implementation and the RFC 7208 test suite expect
 * (`v-macro-ip6`); DNS names compare case-insensitively, so lookups are unaffected.
 */
export function dottedIp(ip: IpAddress): string {
  return ip.family === 4 ? formatIp(ip) : nibbles(ip).join('.').toUpperCase()
}

/** The reverse-mapping name for PTR lookups (RFC 1035 §3.5, RFC 3596 §2.5). */
export function reverseName(ip: IpAddress): string {
  if (ip.family === 4) return `${Array.from(ip.bytes).reverse().join('.')}.in-addr.arpa`
  return `${nibbles(ip).reverse().join('.')}.ip6.arpa`
}
