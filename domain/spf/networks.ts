// CIDR networks as values: containment, subtraction and overlap detection, used by the SPF
// analysis (duplicate/overlapping ranges) and by flattening (exact pass sets of includes).

import { formatIp, type IpAddress, inNetwork, maskIp } from './ip.ts'

export interface Network {
  /** Host bits cleared. */
  address: IpAddress
  prefix: number
}

export function network(address: IpAddress, prefix: number): Network {
  return { address: maskIp(address, prefix), prefix }
}

export function fullPrefix(address: IpAddress): number {
  return address.family === 4 ? 32 : 128
}

/** The whole address space of one family: what an `all` mechanism matches. */
export function everything(family: 4 | 6): Network {
  return { address: { family, bytes: new Uint8Array(family === 4 ? 4 : 16) }, prefix: 0 }
}

/** `1.2.3.0/24`; a single host is written without a prefix, as SPF allows (RFC 7208 §5.6). */
export function formatNetwork(n: Network): string {
  const text = formatIp(n.address)
  return n.prefix === fullPrefix(n.address) ? text : `${text}/${n.prefix}`
}

/** The SPF mechanism for a network: `ip4:…` or `ip6:…`. */
export function networkTerm(n: Network): string {
  return `ip${n.address.family}:${formatNetwork(n)}`
}

export function contains(outer: Network, inner: Network): boolean {
  return outer.prefix <= inner.prefix && inNetwork(inner.address, outer.address, outer.prefix)
}

export function sameNetwork(a: Network, b: Network): boolean {
  return a.prefix === b.prefix && contains(a, b)
}

export function overlaps(a: Network, b: Network): boolean {
  return contains(a, b) || contains(b, a)
}

/** Order by family, then address, then prefix: a network sorts before every network inside it. */
export function compareNetworks(a: Network, b: Network): number {
  if (a.address.family !== b.address.family) return a.address.family - b.address.family
  for (let i = 0; i < a.address.bytes.length; i++) {
    const diff = a.address.bytes[i]! - b.address.bytes[i]!
    if (diff !== 0) return diff
  }
  return a.prefix - b.prefix
}

function halves(n: Network): [Network, Network] {
  const high = n.address.bytes.slice()
  const byte = n.prefix >> 3
  high[byte] = (high[byte] ?? 0) | (0x80 >> (n.prefix & 7))
  return [
    { address: n.address, prefix: n.prefix + 1 },
    { address: { family: n.address.family, bytes: high }, prefix: n.prefix + 1 },
  ]
}

/** `from` minus `remove`, as at most (remove.prefix - from.prefix) networks. */
export function subtract(from: Network, remove: Network): Network[] {
  if (!overlaps(from, remove)) return [from]
  if (contains(remove, from)) return []
  const out: Network[] = []
  let rest = from
  // Walk down towards `remove`, keeping the half that does not hold it at each step.
  while (rest.prefix < remove.prefix) {
    const [low, high] = halves(rest)
    if (contains(low, remove)) {
      out.push(high)
      rest = low
    } else {
      out.push(low)
      rest = high
    }
  }
  return out
}

/** `from` minus every network in `remove`; null once the result would exceed `limit` networks. */
export function subtractAll(
  from: readonly Network[],
  remove: readonly Network[],
  limit = Infinity,
): Network[] | null {
  let current = [...from]
  for (const r of remove) {
    if (current.length === 0) break
    current = current.flatMap((n) => subtract(n, r))
    if (current.length > limit) return null
  }
  return current
}

/** Sorted, with networks inside another (or equal to one) dropped. */
export function normalizeSet(networks: readonly Network[]): Network[] {
  const sorted = [...networks].sort(compareNetworks)
  const out: Network[] = []
  for (const n of sorted) {
    const last = out[out.length - 1]
    if (last !== undefined && contains(last, n)) continue
    out.push(n)
  }
  return out
}

export interface Overlap<T> {
  kind: 'duplicate' | 'contained'
  /** The smaller (or later-sorted equal) network. */
  item: T
  /** The network that holds it. */
  within: T
}

/**
 * Duplicates and containment among networks, in O(n log n): after sorting, CIDR ranges are
 * either nested or disjoint, so a stack of open ranges finds each network's closest container.
 */
export function findOverlaps<T>(items: readonly T[], networkOf: (item: T) => Network): Overlap<T>[] {
  const sorted = items
    .map((item, index) => ({ item, index }))
    .sort((a, b) => {
      return compareNetworks(networkOf(a.item), networkOf(b.item)) || a.index - b.index
    })
  const stack: T[] = []
  const out: Overlap<T>[] = []
  for (const { item } of sorted) {
    const n = networkOf(item)
    while (stack.length > 0 && !contains(networkOf(stack[stack.length - 1]!), n)) stack.pop()
    const top = stack[stack.length - 1]
    if (top !== undefined) {
      const kind = sameNetwork(networkOf(top), n) ? 'duplicate' : 'contained'
      out.push({ kind, item, within: top })
    }
    stack.push(item)
  }
  return out
}
