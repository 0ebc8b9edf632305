// Resolves a domain's SPF record and everything it pulls in (include, redirect, a, mx) without a
// client IP, for analysis and flattening. It walks every branch, as evaluation for a failing
// message would (RFC 7208 §4.6.4 counts terms as they are evaluated), and bounds the walk so that
// loops and fan-out end.

import type { DnsResolver } from '../dns/ports.ts'
import { fetchSpfRecord } from './fetch-record.ts'
import { MAX_MX_RECORDS } from './limits.ts'
import {
  addressesOf,
  describeFailure,
  isFailure,
  isQueryableName,
  isVoid,
  memoizedResolver,
  normalizeName,
} from './lookups.ts'
import { expandDomainSpec, type MacroToken } from './macro.ts'
import { everything, fullPrefix, type Network, network } from './networks.ts'
import type { Directive, DomainSpec, MechanismKind, Qualifier, SpfRecord, SpfSyntaxError } from './record.ts'

export type NodeStatus =
  | 'ok'
  | 'none'
  | 'multiple_records'
  | 'syntax_error'
  | 'dns_error'
  /** The domain is already being evaluated higher up: evaluation would loop to the lookup limit. */
  | 'loop'
  /** Not fetched: the walk's own bounds were reached. */
  | 'truncated'
  /** The include/redirect target is not a usable domain name. */
  | 'invalid_name'

export interface TermProblem {
  code: 'dns_error' | 'mx_limit_exceeded'
  message: string
}

export interface ResolvedTerm {
  text: string
  kind: MechanismKind | 'redirect'
  qualifier: Qualifier
  directive: Directive | null
  /** 1 for the terms RFC 7208 §4.6.4 counts (include, a, mx, ptr, exists, redirect). */
  lookups: number
  /** a/mx/ip4/ip6/all: the networks the term matches. null when they cannot be known here. */
  networks: Network[] | null
  /** Why the term cannot be replaced by a list of networks. */
  unflattenable: string | null
  /** Whether the term's lookup is void (§4.6.4) for an IPv4 / IPv6 client. */
  void4: boolean
  void6: boolean
  problem: TermProblem | null
  /** include / redirect: the record it leads to. */
  child: ResolvedNode | null
}

export interface ResolvedNode {
  domain: string
  via: 'root' | 'include' | 'redirect'
  status: NodeStatus
  reason: string | null
  /** The SPF record text, when exactly one was found. */
  text: string | null
  /** All SPF records found, when there were several. */
  records: string[]
  syntaxError: SpfSyntaxError | null
  record: SpfRecord | null
  terms: ResolvedTerm[]
}

export interface TreeLimits {
  /** Records fetched at most; the RFC limit of 10 lookups makes more than this meaningless. */
  maxNodes: number
  maxDepth: number
}

const DEFAULT_LIMITS: TreeLimits = { maxNodes: 60, maxDepth: 15 }

interface Walk {
  dns: DnsResolver
  limits: TreeLimits
  nodes: number
}

/** Targets can be resolved without a connection when their only macro is %{d} (RFC 7208 §7.3). */
function staticTarget(spec: DomainSpec | null, domain: string): string | null {
  if (spec === null) return domain
  const onlyDomain = spec.tokens.every((t: MacroToken) => t.kind !== 'macro' || t.letter === 'd')
  if (!onlyDomain) return null
  const placeholder = { family: 4 as const, bytes: new Uint8Array(4) }
  const values = { sender: '', localPart: '', senderDomain: '', helo: '', now: new Date(0), ip: placeholder }
  return expandDomainSpec(spec.tokens, { ...values, domain })
}

function baseTerm(text: string, kind: ResolvedTerm['kind'], directive: Directive | null): ResolvedTerm {
  return {
    text,
    kind,
    qualifier: directive?.qualifier ?? '+',
    directive,
    lookups: kind === 'all' || kind === 'ip4' || kind === 'ip6' ? 0 : 1,
    networks: null,
    unflattenable: null,
    void4: false,
    void6: false,
    problem: null,
    child: null,
  }
}

async function addressNetworks(walk: Walk, name: string, cidr4: number | null, cidr6: number | null) {
  const out: Network[] = []
  const voids = { void4: false, void6: false }
  for (const type of ['A', 'AAAA'] as const) {
    const answer = await walk.dns.resolve(name, type)
    if (isFailure(answer)) return { error: describeFailure(answer, name, type) }
    if (isVoid(answer)) voids[type === 'A' ? 'void4' : 'void6'] = true
    if (answer.status !== 'ok') continue
    for (const address of addressesOf(answer.records)) {
      const prefix = (address.family === 4 ? cidr4 : cidr6) ?? fullPrefix(address)
      out.push(network(address, prefix))
    }
  }
  return { networks: out, ...voids }
}

async function resolveAddressTerm(walk: Walk, term: ResolvedTerm, domain: string): Promise<void> {
  const m = term.directive!.mechanism
  if (m.kind !== 'a' && m.kind !== 'mx') return
  const name = staticTarget(m.domain, domain)
  if (name === null) {
    term.unflattenable = 'its domain uses macros that depend on the message'
    return
  }
  if (!isQueryableName(name)) {
    Object.assign(term, { networks: [], void4: true, void6: true })
    return
  }
  let hosts = [name]
  if (m.kind === 'mx') {
    const answer = await walk.dns.resolve(name, 'MX')
    if (isFailure(answer)) {
      term.problem = { code: 'dns_error', message: describeFailure(answer, name, 'MX') }
      term.unflattenable = 'its DNS lookup failed'
      return
    }
    if (isVoid(answer)) Object.assign(term, { void4: true, void6: true })
    const records = answer.status === 'ok' ? answer.records : []
    hosts = records.flatMap((r) =>
      r.type === 'MX' && r.exchange !== '' && r.exchange !== '.' ? [r.exchange] : [],
    )
    if (hosts.length > MAX_MX_RECORDS) {
      const message = `${name} has ${hosts.length} MX records; more than ${MAX_MX_RECORDS} is a permerror (RFC 7208 §4.6.4)`
      term.problem = { code: 'mx_limit_exceeded', message }
      term.unflattenable = 'it is a permerror'
      return
    }
  }
  const networks: Network[] = []
  for (const host of hosts) {
    if (!isQueryableName(host)) continue
    const resolved = await addressNetworks(walk, host, m.cidr4, m.cidr6)
    if ('error' in resolved) {
      term.problem = { code: 'dns_error', message: resolved.error ?? 'DNS lookup failed' }
      term.unflattenable = 'its DNS lookup failed'
      return
    }
    networks.push(...resolved.networks)
    if (m.kind === 'a') Object.assign(term, { void4: resolved.void4, void6: resolved.void6 })
  }
  term.networks = networks
}

async function resolveTerm(walk: Walk, directive: Directive, domain: string, ancestors: string[]) {
  const m = directive.mechanism
  const term = baseTerm(directive.text, m.kind, directive)
  switch (m.kind) {
    case 'all':
      term.networks = [everything(4), everything(6)]
      break
    case 'ip4':
    case 'ip6':
      term.networks = [network(m.address, m.prefix ?? fullPrefix(m.address))]
      break
    case 'a':
    case 'mx':
      await resolveAddressTerm(walk, term, domain)
      break
    case 'ptr':
      term.unflattenable = "it depends on the client's reverse DNS"
      break
    case 'exists':
      term.unflattenable = 'it depends on a DNS lookup made for each message'
      break
    case 'include':
      term.child = await resolveTarget(walk, m.domain, domain, 'include', ancestors)
      if (term.child === null) term.unflattenable = 'its domain uses macros that depend on the message'
      break
  }
  return term
}

async function resolveTarget(
  walk: Walk,
  spec: DomainSpec,
  domain: string,
  via: 'include' | 'redirect',
  ancestors: string[],
): Promise<ResolvedNode | null> {
  const target = staticTarget(spec, domain)
  if (target === null) return null
  const empty = { text: null, records: [], syntaxError: null, record: null, terms: [] }
  if (!isQueryableName(target)) {
    return {
      ...empty,
      domain: target,
      via,
      status: 'invalid_name',
      reason: `'${target}' is not a domain name`,
    }
  }
  if (ancestors.includes(normalizeName(target))) {
    const reason = `${target} is already being evaluated: the ${via} loops until the lookup limit`
    return { ...empty, domain: target, via, status: 'loop', reason }
  }
  if (walk.nodes >= walk.limits.maxNodes || ancestors.length >= walk.limits.maxDepth) {
    return {
      ...empty,
      domain: target,
      via,
      status: 'truncated',
      reason: 'not resolved: analysis limits reached',
    }
  }
  return resolveNode(walk, target, via, ancestors)
}

async function resolveNode(
  walk: Walk,
  domain: string,
  via: ResolvedNode['via'],
  ancestors: string[],
): Promise<ResolvedNode> {
  walk.nodes += 1
  const fetched = await fetchSpfRecord(walk.dns, domain)
  const node: ResolvedNode = {
    domain,
    via,
    status: 'ok',
    reason: null,
    text: null,
    records: [],
    syntaxError: null,
    record: null,
    terms: [],
  }
  if (!fetched.ok) {
    node.reason = fetched.reason
    node.text = fetched.text ?? null
    node.records = fetched.records ?? []
    node.syntaxError = fetched.error ?? null
    if (fetched.result === 'none') node.status = 'none'
    else if (fetched.result === 'temperror') node.status = 'dns_error'
    else node.status = fetched.records !== undefined ? 'multiple_records' : 'syntax_error'
    return node
  }
  const record = fetched.record
  Object.assign(node, { text: record.text, record })
  const path = [...ancestors, normalizeName(domain)]
  for (const directive of record.directives) node.terms.push(await resolveTerm(walk, directive, domain, path))
  // §6.1: redirect counts (and applies) only when the record has no "all".
  if (record.redirect !== null && !record.hasAll) {
    const term = baseTerm(`redirect=${record.redirect.text}`, 'redirect', null)
    term.child = await resolveTarget(walk, record.redirect, domain, 'redirect', path)
    if (term.child === null) term.unflattenable = 'its domain uses macros that depend on the message'
    node.terms.push(term)
  }
  return node
}

export interface SpfTreeDeps {
  dns: DnsResolver
}

export async function resolveSpfTree(
  deps: SpfTreeDeps,
  domain: string,
  limits: Partial<TreeLimits> = {},
): Promise<ResolvedNode> {
  const walk: Walk = { dns: memoizedResolver(deps.dns), limits: { ...DEFAULT_LIMITS, ...limits }, nodes: 0 }
  return resolveNode(walk, normalizeName(domain), 'root', [])
}

/** DNS-querying terms of this record alone (RFC 7208 §4.6.4). */
export function ownLookups(node: ResolvedNode): number {
  return node.terms.reduce((sum, term) => sum + term.lookups, 0)
}

/** This record's terms plus everything its includes and redirect evaluate. */
export function branchLookups(node: ResolvedNode): number {
  return node.terms.reduce(
    (sum, term) => sum + term.lookups + (term.child ? branchLookups(term.child) : 0),
    0,
  )
}
