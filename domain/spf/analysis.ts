// SPF analysis beyond pass/fail: the include tree with the lookup cost of each branch, void
// lookups, duplicate and overlapping networks, warnings with stable codes, and a flattened
// equivalent. `analyzeSpf` fetches through the DNS port; `analyzeTree` is pure and deterministic.

import { type FlattenedSpf, type FlattenOptions, flattenSpf } from './flatten.ts'
import {
  branchLookups,
  type NodeStatus,
  ownLookups,
  type ResolvedNode,
  resolveSpfTree,
  type SpfTreeDeps,
  type TreeLimits,
} from './include-tree.ts'
import { MAX_DNS_TERMS, MAX_VOID_LOOKUPS } from './limits.ts'
import { findOverlaps, formatNetwork, type Network } from './networks.ts'
import { type SpfWarning, spfWarnings } from './warnings.ts'

export interface IncludeTreeNode {
  domain: string
  via: 'root' | 'include' | 'redirect'
  /** The include/redirect term that led here; null for the root. */
  term: string | null
  status: NodeStatus
  record: string | null
  reason: string | null
  /** DNS-querying terms in this record itself (RFC 7208 §4.6.4). */
  lookups: number
  /** This record plus everything below it: what evaluating this branch costs. */
  branchLookups: number
  /** Worst case over IPv4 and IPv6 clients, for this branch. */
  voidLookups: number
  children: IncludeTreeNode[]
}

export interface NetworkSource {
  network: string
  domain: string
  term: string
}

export interface NetworkOverlap {
  kind: 'duplicate' | 'contained'
  network: NetworkSource
  within: NetworkSource
}

export interface SpfAnalysis {
  domain: string
  record: string | null
  tree: IncludeTreeNode
  /** Worst-case DNS-querying terms for one evaluation (every branch evaluated). */
  lookups: number
  lookupLimit: number
  voidLookups: number
  voidLookupLimit: number
  overlaps: NetworkOverlap[]
  warnings: SpfWarning[]
  /** null when the root record is missing or broken. */
  flattened: FlattenedSpf | null
}

export interface AnalyzeSpfInput {
  domain: string
  flatten?: FlattenOptions
  limits?: Partial<TreeLimits>
}

function voidCounts(node: ResolvedNode): { v4: number; v6: number } {
  let v4 = 0
  let v6 = 0
  for (const term of node.terms) {
    if (term.void4) v4 += 1
    if (term.void6) v6 += 1
    if (term.child !== null) {
      const inner = voidCounts(term.child)
      v4 += inner.v4
      v6 += inner.v6
    }
  }
  return { v4, v6 }
}

export function voidLookups(node: ResolvedNode): number {
  const counts = voidCounts(node)
  return Math.max(counts.v4, counts.v6)
}

function treeView(node: ResolvedNode, term: string | null): IncludeTreeNode {
  return {
    domain: node.domain,
    via: node.via,
    term,
    status: node.status,
    record: node.text,
    reason: node.reason,
    lookups: ownLookups(node),
    branchLookups: branchLookups(node),
    voidLookups: voidLookups(node),
    children: node.terms.flatMap((t) => (t.child === null ? [] : [treeView(t.child, t.text)])),
  }
}

function networkSources(node: ResolvedNode, out: { network: Network; source: NetworkSource }[] = []) {
  for (const term of node.terms) {
    if (term.kind !== 'all' && term.networks !== null) {
      for (const network of term.networks) {
        out.push({
          network,
          source: { network: formatNetwork(network), domain: node.domain, term: term.text },
        })
      }
    }
    if (term.child !== null) networkSources(term.child, out)
  }
  return out
}

/** Pure: everything is derived from the resolved tree. */
export function analyzeTree(root: ResolvedNode, flatten: FlattenOptions = {}): SpfAnalysis {
  const lookups = branchLookups(root)
  const voids = voidLookups(root)
  const overlaps = findOverlaps(networkSources(root), (entry) => entry.network).map((o) => ({
    kind: o.kind,
    network: o.item.source,
    within: o.within.source,
  }))
  return {
    domain: root.domain,
    record: root.text,
    tree: treeView(root, null),
    lookups,
    lookupLimit: MAX_DNS_TERMS,
    voidLookups: voids,
    voidLookupLimit: MAX_VOID_LOOKUPS,
    overlaps,
    warnings: spfWarnings(root, { lookups, voidLookups: voids, overlaps }),
    flattened: flattenSpf(root, flatten),
  }
}

export async function analyzeSpf(deps: SpfTreeDeps, input: AnalyzeSpfInput): Promise<SpfAnalysis> {
  const root = await resolveSpfTree(deps, input.domain, input.limits)
  return analyzeTree(root, input.flatten)
}
