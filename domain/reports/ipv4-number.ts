// A source IP as a number, for the rollup's index of sources (report-rollup.ts): a Map finds a
// number faster than a string it must hash and compare, and nearly every source is IPv4.

/**
 * A dotted quad as written canonically (no leading zeros, each part ≤ 255) as its 32-bit number,
 * else -1. Different canonical strings are different numbers, so keying by it merges nothing new.
 */
export function ipv4Number(ip: string): number {
  let value = 0
  let part = 0
  let digits = 0
  let dots = 0
  for (let i = 0; i < ip.length; i++) {
    const c = ip.charCodeAt(i)
    if (c === 46) {
      if (digits === 0 || ++dots > 3) return -1
      value = value * 256 + part
      part = 0
      digits = 0
    } else {
      const digit = c - 48
      if (digit < 0 || digit > 9 || (digits > 0 && part === 0) || ++digits > 3) return -1
      part = part * 10 + digit
      if (part > 255) return -1
    }
  }
  return dots === 3 && digits > 0 ? value * 256 + part : -1
}
