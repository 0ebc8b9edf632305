// Flattening: an equivalent SPF policy with include/a/mx replaced by the networks they match, split
// into records that each fit in one DNS answer (chain.ts).
//
// Equivalence is exact, not approximate: each replaced term matches the same addresses as before,
// in the same order, with the same qualifier. An include matches exactly its record's *pass* set
// (RFC 7208 §5.2), computed in evaluation order, so `-ip4:x ip4:y` inside an include is honoured.
// Terms that depend on the message or the connection (exists, ptr, macros) are kept as written in
// the root record; in chained records %{d} and implicit domains are made explicit, since the
// current domain changes across redirect. (One residual difference: %{p} prefers names under the
// current domain, §7.3, a SHOULD that a chained record cannot reproduce.)

import { type Chain, type ChainedRecord, chainRecords } from './chain.ts'
import { branchLookups, type ResolvedNode, type ResolvedTerm } from './include-tree.ts'
import { MAX_DNS_TERMS } from './limits.ts'
import { expandMacros } from './macro.ts'
import { contains, type Network, networkTerm, normalizeSet, subtractAll } from './networks.ts'
import type { Directive, DomainSpec, Qualifier } from './record.ts'

export interface FlattenOptions {
  /** Chained records are named `<chainLabel><n>.<domain>`. Default `_spf`. */
  chainLabel?: string
  /** Longest TXT character-string (RFC 1035 §3.3: 255). */
  maxStringLength?: number
  /** A record's TXT RDATA (strings plus their length octets) stays under this. Default 512. */
  maxRecordBytes?: number
  /** Give up on a branch that expands to more networks than this. Default 2000. */
  maxNetworks?: number
}

export interface UnflattenableTerm {
  domain: string
  term: string
  reason: string
}

export interface FlattenedSpf {
  /** The root domain's record first, then `_spf1.<domain>`, `_spf2.<domain>`, … */
  records: ChainedRecord[]
  /** How the records are linked: see chain.ts. */
  method: Chain['method']
  /** Where the result is not exactly equivalent, and why. */
  caveats: string[]
  /** The ip4/ip6 terms, in order, with their qualifiers. */
  networks: string[]
  /** Terms kept as written. */
  unflattenable: UnflattenableTerm[]
  lookupsBefore: number
  lookupsAfter: number
  lookupsSaved: number
}

type Item =
  | { kind: 'net'; qualifier: Qualifier; network: Network }
  /** `text` has %{d} and implicit domains made explicit; `asWritten` is usable in the root record only. */
  | { kind: 'kept'; qualifier: Qualifier; text: string; asWritten: string | null; lookups: number }

interface Layout {
  items: Item[]
  all: string | null
  redirect: { text: string; asWritten: string | null; lookups: number } | null
  exp: string | null
  unflattenable: UnflattenableTerm[]
}

/** Why a branch cannot be reduced to networks; null when it can. */
function obstacle(node: ResolvedNode | null): string | null {
  if (node === null) return 'its domain uses macros that depend on the message'
  if (node.status !== 'ok') return `${node.domain}: ${node.reason ?? node.status}`
  for (const term of node.terms) {
    if (term.kind === 'include' || term.kind === 'redirect') {
      const inner = obstacle(term.child)
      if (inner !== null) return inner
    } else if (term.unflattenable !== null) return `${node.domain} '${term.text}': ${term.unflattenable}`
    if (term.kind === 'all') break
  }
  return null
}

/** The addresses for which the record's result is pass (RFC 7208 §5.2), or null. */
function passSet(node: ResolvedNode | null, budget: { left: number }): Network[] | null {
  if (node === null || node.status !== 'ok') return null
  const decided: Network[] = []
  const pass: Network[] = []
  for (const term of node.terms) {
    const nets =
      term.kind === 'include' || term.kind === 'redirect'
        ? passSet(term.child, budget)
        : term.unflattenable === null
          ? term.networks
          : null
    if (nets === null) return null
    budget.left -= nets.length
    if (budget.left < 0) return null
    // §6.1: a redirect's result becomes ours for whatever is still undecided, so its pass set passes.
    const qualifier = term.kind === 'redirect' ? '+' : term.qualifier
    if (qualifier === '+') {
      // Exceptions fragment what is left (a /0 minus 1,000 hosts is ~30,000 networks): bounded too.
      const left = subtractAll(nets, decided, budget.left)
      if (left === null) return null
      budget.left -= left.length
      pass.push(...left)
    }
    decided.push(...nets)
    if (term.kind === 'all') break
  }
  return normalizeSet(pass)
}

const placeholderValues = {
  sender: '',
  localPart: '',
  senderDomain: '',
  helo: '',
  now: new Date(0),
  ip: { family: 4 as const, bytes: new Uint8Array(4) },
}

/** The domain-spec with %{d} macros replaced by the (escaped) domain they stand for. */
function bindSpec(spec: DomainSpec, domain: string): string {
  return spec.tokens
    .map((token) => {
      if (token.kind === 'literal') return token.text
      if (token.kind === 'escape') return token.raw
      if (token.letter !== 'd') return token.raw
      return expandMacros([token], { ...placeholderValues, domain }).replaceAll('%', '%%')
    })
    .join('')
}

function bindDirective(directive: Directive, domain: string): string {
  const m = directive.mechanism
  const q = directive.explicitQualifier ? directive.qualifier : ''
  const target = (spec: DomainSpec | null) => (spec === null ? domain : bindSpec(spec, domain))
  switch (m.kind) {
    case 'a':
    case 'mx': {
      const cidr = `${m.cidr4 === null ? '' : `/${m.cidr4}`}${m.cidr6 === null ? '' : `//${m.cidr6}`}`
      return `${q}${m.kind}:${target(m.domain)}${cidr}`
    }
    case 'ptr':
      return `${q}ptr:${target(m.domain)}`
    case 'include':
    case 'exists':
      return `${q}${m.kind}:${bindSpec(m.domain, domain)}`
    default:
      return directive.text
  }
}

function keep(term: ResolvedTerm, node: ResolvedNode, reason: string, layout: Layout, isRoot: boolean) {
  const text = term.directive === null ? term.text : bindDirective(term.directive, node.domain)
  const lookups = term.lookups + (term.child === null ? 0 : branchLookups(term.child))
  const asWritten = isRoot ? term.text : null
  layout.items.push({ kind: 'kept', qualifier: term.qualifier, text, asWritten, lookups })
  layout.unflattenable.push({ domain: node.domain, term: term.text, reason })
}

function layoutOf(node: ResolvedNode, budget: { left: number }, isRoot: boolean): Layout {
  const explanation = node.record?.explanation ?? null
  const exp = explanation === null ? null : `exp=${bindSpec(explanation, node.domain)}`
  const layout: Layout = { items: [], all: null, redirect: null, exp, unflattenable: [] }
  for (const term of node.terms) {
    if (term.kind === 'all') {
      layout.all = term.text
      break // nothing after "all" is ever evaluated
    }
    if (term.kind === 'redirect') {
      const target = term.child
      const inner = target !== null && target.status === 'ok' ? layoutOf(target, budget, false) : null
      // The target's exp= governs matches inside it (§6.2); inline only when that changes nothing.
      if (inner !== null && inner.exp === exp) {
        layout.items.push(...inner.items)
        layout.unflattenable.push(...inner.unflattenable)
        Object.assign(layout, { all: inner.all, redirect: inner.redirect })
      } else {
        const text = `redirect=${bindSpec(node.record!.redirect!, node.domain)}`
        const lookups = 1 + (target === null ? 0 : branchLookups(target))
        layout.redirect = { text, asWritten: isRoot ? term.text : null, lookups }
        layout.unflattenable.push({
          domain: node.domain,
          term: term.text,
          reason: obstacle(target) ?? 'exp= differs',
        })
      }
      continue
    }
    const nets =
      term.kind === 'include' ? passSet(term.child, budget) : term.unflattenable ? null : term.networks
    if (nets === null) {
      keep(
        term,
        node,
        term.kind === 'include' ? (obstacle(term.child) ?? 'too many networks') : term.unflattenable!,
        layout,
        isRoot,
      )
      continue
    }
    for (const n of nets) layout.items.push({ kind: 'net', qualifier: term.qualifier, network: n })
  }
  return layout
}

/** Drops networks an earlier network already covers: they can never be the first match. */
function dropShadowed(items: Item[]): Item[] {
  const seen: Network[] = []
  return items.filter((item) => {
    if (item.kind !== 'net') return true
    if (seen.some((earlier) => contains(earlier, item.network))) return false
    seen.push(item.network)
    return true
  })
}

/** Kept terms stay as written in the root record; chained records get the explicit form. */
function itemText(item: Item, chunk = 1): string {
  if (item.kind === 'kept') return chunk === 0 && item.asWritten !== null ? item.asWritten : item.text
  return `${item.qualifier === '+' ? '' : item.qualifier}${networkTerm(item.network)}`
}

export function flattenSpf(root: ResolvedNode, options: FlattenOptions = {}): FlattenedSpf | null {
  if (root.status !== 'ok') return null
  const layout = layoutOf(root, { left: options.maxNetworks ?? 2000 }, true)
  const items = dropShadowed(layout.items)
  const rootExp = root.record?.explanation
  const redirect = layout.redirect
  const chain = chainRecords({
    domain: root.domain,
    pieces: items.map((item) => ({
      plus: item.qualifier === '+',
      root: itemText(item, 0),
      chained: itemText(item),
    })),
    ending:
      layout.all !== null
        ? { root: layout.all, chained: layout.all }
        : redirect === null
          ? null
          : { root: redirect.asWritten ?? redirect.text, chained: redirect.text },
    exp: rootExp ? { root: `exp=${rootExp.text}`, chained: layout.exp ?? '' } : null,
    label: options.chainLabel ?? '_spf',
    maxStringLength: options.maxStringLength ?? 255,
    maxRecordBytes: options.maxRecordBytes ?? 512,
  })
  const records = chain.records
  const kept = items.reduce((sum, item) => sum + (item.kind === 'kept' ? item.lookups : 0), 0)
  const redirectCost = layout.all === null && layout.redirect !== null ? layout.redirect.lookups : 0
  const lookupsBefore = branchLookups(root)
  const lookupsAfter = kept + (records.length - 1) + redirectCost
  const caveats = [...chain.caveats]
  if (lookupsAfter > MAX_DNS_TERMS) {
    caveats.push(
      `the records need ${lookupsAfter} DNS-querying terms, over the limit of ${MAX_DNS_TERMS} (RFC 7208 §4.6.4)`,
    )
  }
  return {
    records,
    method: chain.method,
    caveats,
    networks: items.filter((item) => item.kind === 'net').map((item) => itemText(item)),
    unflattenable: layout.unflattenable,
    lookupsBefore,
    lookupsAfter,
    lookupsSaved: lookupsBefore - lookupsAfter,
  }
}
