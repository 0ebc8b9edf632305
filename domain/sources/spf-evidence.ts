// Which includes of a domain's published SPF record authorise a source IP: the `spfIncludes`
// evidence of classifySource. Pure: it reads the include tree resolveSpfTree built (one DNS walk
// per request), never the DNS.
//
// Each top-level include (and each include of a record the root redirects to, since a redirect
// replaces the record, RFC 7208 §6.1) is judged on its own, as if it were the only term: does its
// record give `pass` for the IP? Inside a branch, evaluation follows RFC 7208 §4.6.2 and §5.2:
// terms in order, the first match decides (its qualifier gives the result), an include matches
// when its record passes, a redirect hands over to its record. Matching uses the networks the
// tree holds: ip4/ip6, and a/mx through the addresses resolved while building the tree (their
// cidr lengths applied). Terms whose outcome depends on the message or on a per-IP lookup (ptr,
// exists, macros other than %{d}) cannot be decided here and are skipped, so a branch that relies
// on them gives no evidence; `all` ends a branch without evidence, since it says nothing about who
// the provider is. Records that could not be fetched or parsed never pass (their evaluation is an
// error, RFC 7208 §5.2).
//
// Top-level includes are not ordered against each other: evaluation would stop at the first one
// that passes, but evidence asks which providers the owner authorised for this IP, and two that
// overlap are a conflict worth showing. The result lists the include names along each authorising
// path, outermost first: a top-level `include:_spf.example.com` that itself includes
// `sendgrid.net` yields both, so a provider reached through the owner's own (or a hosted) record
// is still recognised.

import type { ResolvedNode, ResolvedTerm } from '../spf/include-tree.ts'
import { type IpAddress, inNetwork, parseIp, unmapIpv4 } from '../spf/ip.ts'

/** Include names, lower-case without the root dot. */
const nameOf = (node: ResolvedNode) => node.domain.toLowerCase().replace(/\.$/, '')

const matchesNetworks = (term: ResolvedTerm, ip: IpAddress) =>
  term.networks?.some((n) => inNetwork(ip, n.address, n.prefix)) ?? false

/**
 * Whether `node`'s record gives `pass` for `ip` by network terms; when it does, `path` receives the
 * includes it passed through (the node's own name is added by the caller).
 */
function passes(node: ResolvedNode, ip: IpAddress, path: string[], depth: number): boolean {
  // The tree is bounded and loops are cut when it is built; the depth guard is for hand-made trees.
  if (node.status !== 'ok' || depth > 32) return false
  for (const term of node.terms) {
    switch (term.kind) {
      case 'all':
        return false
      case 'ip4':
      case 'ip6':
      case 'a':
      case 'mx':
        if (matchesNetworks(term, ip)) return term.qualifier === '+'
        break
      case 'include': {
        if (term.child === null) break
        const inner: string[] = []
        if (!passes(term.child, ip, inner, depth + 1)) break
        if (term.qualifier !== '+') return false
        path.push(nameOf(term.child), ...inner)
        return true
      }
      case 'redirect':
        return term.child !== null && passes(term.child, ip, path, depth + 1)
      default:
        // ptr, exists: undecidable without the message; treated as not matching.
        break
    }
  }
  return false
}

/** The include terms that count as top-level: the root's own, or those of the record it redirects to. */
function topLevelIncludeTerms(root: ResolvedNode): ResolvedTerm[] {
  const terms: ResolvedTerm[] = []
  let node: ResolvedNode | null = root
  for (let hops = 0; node !== null && node.status === 'ok' && hops < 10; hops++) {
    terms.push(...node.terms.filter((term) => term.kind === 'include'))
    node = node.terms.find((term) => term.kind === 'redirect')?.child ?? null
  }
  return terms
}

/** The top-level include targets of the published record (redirects followed), as written. */
export function topLevelIncludes(root: ResolvedNode | null): string[] {
  if (root === null) return []
  const names = topLevelIncludeTerms(root).map((term) =>
    term.child === null ? term.text.replace(/^[+?~-]?include:/i, '') : nameOf(term.child),
  )
  return [...new Set(names)]
}

/**
 * ip → the include names whose branch of the domain's SPF record authorises it (outermost first,
 * each once). A null tree (no record known) or an unparseable IP gives no evidence.
 */
export function spfIncludeEvidence(root: ResolvedNode | null): (ip: string) => string[] {
  const includes = root === null ? [] : topLevelIncludeTerms(root)
  const memo = new Map<string, string[]>()
  return (text) => {
    const known = memo.get(text)
    if (known !== undefined) return known
    const parsed = parseIp(text)
    const found: string[] = []
    if (parsed !== null) {
      // RFC 7208 §5: an IPv4-mapped IPv6 client is matched as IPv4.
      const ip = unmapIpv4(parsed)
      for (const term of includes) {
        if (term.child === null || term.qualifier !== '+') continue
        const inner: string[] = []
        if (passes(term.child, ip, inner, 1)) found.push(nameOf(term.child), ...inner)
      }
    }
    const result = [...new Set(found)]
    memo.set(text, result)
    return result
  }
}
