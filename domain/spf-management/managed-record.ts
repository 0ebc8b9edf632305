// A managed (hosted) SPF record (issue #5). The user publishes `include:<label>.<zone>` once; the
// service serves the record at that name from its authoritative responder and changes it when the
// user's senders change. This module turns a configuration into the TXT records to serve, within
// the RFC 7208 §4.6.4 lookup limit (flattening when it must) and §3.4 answer size (chaining).
// Pure: resolving the include tree goes through the DNS port; see docs/spf-management.md.

import { hmac } from '@oslojs/crypto/hmac'
import { SHA256, sha256 } from '@oslojs/crypto/sha2'
import { encodeBase32LowerCaseNoPadding } from '@oslojs/encoding'
import type { DnsResolver } from '../dns/ports.ts'
import { fail, invalid, ok, type Result } from '../shared/result.ts'
import { analyzeTree } from '../spf/analysis.ts'
import { type ChainedRecord, chainRecords, splitTxtStrings } from '../spf/chain.ts'
import { type ResolvedNode, resolveSpfTree } from '../spf/include-tree.ts'
import { MAX_DNS_TERMS } from '../spf/limits.ts'
import { isQueryableName, normalizeName } from '../spf/lookups.ts'
import { type ManagedSource, normalizeSources, sourceFailure, sourceTerm } from './sources.ts'

export type { ManagedSource } from './sources.ts'
export { normalizeSource, sourceKey, validateSources } from './sources.ts'
export { type UserRecord, userRecordWithInclude } from './user-record.ts'

export interface ManagedSpfConfig {
  sources: ManagedSource[]
  /** What unlisted hosts get. Only fail or softfail: ?all and +all defeat the record. */
  all: '-all' | '~all'
  /** auto: only when the lookup budget requires it; always: every time; never: refuse instead. */
  flatten: 'auto' | 'always' | 'never'
}

export interface HostedRecord {
  name: string
  /** The record as one string: what the responder's `{ txt: [text] }` serves. */
  text: string
  /** The same text cut into ≤ 255-byte character-strings (RFC 7208 §3.3), for other DNS hosts. */
  strings: string[]
}

export interface HostedRecords {
  /** The hosted name first, then the chained `_spfN.<hosted>` records. */
  records: HostedRecord[]
  /** DNS-querying terms evaluating the hosted name costs, everything below it included (§4.6.4). */
  lookups: number
  flattened: boolean
  /** ip4/ip6 terms written in the records. */
  networks: number
  /** Where the result is not what the sources say or may break, in words. */
  caveats: string[]
}

const MAX_LABEL = 63
// 100 bits: no collision among any realistic number of customers.
const HASH_CHARS = 20
// Chained records are `_spf<n>.<hosted>`; the name must stay queryable with a two-digit n.
const CHAIN_LABEL = '_spf'
const LDH_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/
const encoder = new TextEncoder()

/**
 * The per-domain label under the hosted zone. Readable by default: `example.com` → `example-com`,
 * with '-' doubled before '.' becomes '-' so that `a-b.com` and `a.b-com` cannot collide. Readable
 * names leak nothing new: the responder has no NSEC to walk, and a customer's own SPF record names
 * its label anyway. A label is at most 63 octets (RFC 1035 §2.3.4), so a longer name (or a name
 * that is not plain LDH) becomes `<readable prefix>---<hash>`; with `secretSalt` every label is
 * `h---<keyed hash>`, for operators who do not want labels guessable from domain names. A run of
 * exactly three hyphens never occurs in a readable label (runs there are 1, or even), so hashed
 * and readable labels never collide either.
 */
export function domainLabel(domain: string, secretSalt?: string): string {
  const name = normalizeName(domain.trim())
  const bytes = encoder.encode(name)
  const digest = (mac: Uint8Array) => encodeBase32LowerCaseNoPadding(mac).slice(0, HASH_CHARS)
  if (secretSalt !== undefined && secretSalt !== '') {
    return `h---${digest(hmac(SHA256, encoder.encode(secretSalt), bytes))}`
  }
  const ldh = name.split('.').every((label) => LDH_LABEL.test(label))
  const readable = name.replaceAll('-', '--').replaceAll('.', '-')
  if (ldh && readable.length <= MAX_LABEL) return readable
  const prefix = ldh ? readable.slice(0, MAX_LABEL - 3 - HASH_CHARS).replace(/-+$/, '') : ''
  return `${prefix === '' ? 'h' : prefix}---${digest(sha256(bytes))}`
}

/** `<label>.<zone>`: the name the user's `include:` points at. */
export function hostedName(label: string, zone: string): string {
  return `${label}.${normalizeName(zone.trim())}`
}

/** Cheap terms first: all terms are "+", so order changes what a match costs, not the result. */
function evaluationOrder(sources: readonly ManagedSource[]): number[] {
  const indices = sources.map((_, i) => i)
  const isNetwork = (i: number) => sources[i]!.kind === 'ip4' || sources[i]!.kind === 'ip6'
  return [...indices.filter(isNetwork), ...indices.filter((i) => !isNetwork(i))]
}

/** The hosted record before flattening or chaining, for validated sources. */
export function candidateRecord(config: ManagedSpfConfig): string {
  const terms = evaluationOrder(config.sources).map((i) => sourceTerm(config.sources[i]!))
  return ['v=spf1', ...terms, config.all].join(' ')
}

export interface ManagedRecordInput {
  domain: string
  zone: string
  config: ManagedSpfConfig
  /** Default `domainLabel(domain)`; pass the salted label when the service uses one. */
  label?: string
  /**
   * DNS-querying terms the user's own record spends besides `include:<hosted>` (see
   * `userRecordWithInclude`); default 0, for `v=spf1 include:<hosted> -all`.
   */
  outsideLookups?: number
}

interface Checked {
  hosted: string
  domain: string
  config: ManagedSpfConfig
  origin: number[]
  budget: number
  outside: number
}

function checkInput(input: ManagedRecordInput): Result<Checked> {
  const domain = normalizeName(input.domain.trim())
  const zone = normalizeName(input.zone.trim())
  if (!isQueryableName(domain)) return invalid('domain', `'${input.domain}' is not a domain name`)
  if (!isQueryableName(zone)) return invalid('zone', `'${input.zone}' is not a domain name`)
  const label = input.label ?? domainLabel(domain)
  if (!/^[a-z0-9_-]{1,63}$/.test(label)) return invalid('label', `'${label}' is not a DNS label`)
  const hosted = hostedName(label, zone)
  if (!isQueryableName(`${CHAIN_LABEL}99.${hosted}`)) {
    return invalid('zone', `${hosted} leaves no room for chained records under the 253-octet name limit`)
  }
  const { all, flatten } = input.config
  if (all !== '-all' && all !== '~all') return invalid('all', "all must be '-all' or '~all'")
  if (!['auto', 'always', 'never'].includes(flatten)) {
    return invalid('flatten', "flatten must be 'auto', 'always' or 'never'")
  }
  const outside = input.outsideLookups ?? 0
  if (!Number.isInteger(outside) || outside < 0 || outside >= MAX_DNS_TERMS) {
    return invalid('outsideLookups', `outsideLookups must be a whole number from 0 to ${MAX_DNS_TERMS - 1}`)
  }
  const normalized = normalizeSources(input.config.sources, zone)
  if (!normalized.ok) return normalized
  const { sources, origin } = normalized.value
  const self = sources.findIndex((s) => s.kind === 'include' && s.domain === domain)
  if (self !== -1) {
    const message = `${domain} is the domain itself: its record includes the hosted record, so this include loops (RFC 7208 §5.2)`
    return sourceFailure({ [`sources[${origin[self]}].domain`]: [message] })
  }
  // §4.6.4 counts from the user's domain: their include:<hosted> and their other terms come first.
  const budget = MAX_DNS_TERMS - 1 - outside
  return ok({ hosted, domain, config: { ...input.config, sources }, origin, budget, outside })
}

function hasLoop(node: ResolvedNode): boolean {
  return node.status === 'loop' || node.terms.some((term) => term.child !== null && hasLoop(term.child))
}

// A source that makes every evaluation reaching it a permerror is refused, not published.
const BROKEN = new Set(['none', 'multiple_records', 'syntax_error', 'invalid_name'])

function sourceProblems(tree: ResolvedNode, checked: Checked): Result<null> {
  const order = evaluationOrder(checked.config.sources)
  const errors: Record<string, string[]> = {}
  tree.terms.forEach((term, t) => {
    const index = order[t]
    if (index === undefined) return // the final all
    const field = `sources[${checked.origin[index]}].domain`
    const child = term.child
    if (child !== null && hasLoop(child)) {
      errors[field] = [`${term.text} leads back to the hosted record: a loop (RFC 7208 §5.2)`]
    } else if (child !== null && BROKEN.has(child.status)) {
      errors[field] = [`${child.reason ?? child.status}: ${term.text} would be a permerror (RFC 7208 §5.2)`]
    } else if (term.problem?.code === 'mx_limit_exceeded') errors[field] = [term.problem.message]
  })
  return Object.keys(errors).length > 0 ? sourceFailure(errors) : ok(null)
}

function limitExceeded(hostedLookups: number, checked: Checked): Result<HostedRecords> {
  const lookups = hostedLookups + 1 + checked.outside
  return fail({ code: 'spf_lookup_limit_exceeded', lookups, limit: MAX_DNS_TERMS })
}

const published = (records: readonly ChainedRecord[]): HostedRecord[] =>
  records.map(({ name, text, strings }) => ({ name, text, strings }))

// Handled here (refused, chained or flattened away) rather than passed on as caveats.
const HANDLED = new Set(['lookup_limit_exceeded', 'include_loop', 'record_too_long'])

/**
 * The records to serve for a configuration. `resolved` is the include tree of
 * `candidateRecord(config)` at the hosted name (see `planManagedRecord`); null only when nothing
 * needs resolving, and then lookups below includes are not counted.
 */
export function buildManagedRecord(
  input: ManagedRecordInput & { resolved: ResolvedNode | null },
): Result<HostedRecords> {
  const checked = checkInput(input)
  if (!checked.ok) return checked
  const { config, hosted, budget } = checked.value
  const tree = input.resolved
  const candidate = candidateRecord(config)
  const caveats: string[] = []
  const networkSources = config.sources.filter((s) => s.kind === 'ip4' || s.kind === 'ip6').length
  let lookups = config.sources.length - networkSources
  let analysis: ReturnType<typeof analyzeTree> | null = null
  if (tree !== null) {
    if (normalizeName(tree.domain) !== hosted || tree.text !== candidate) {
      return invalid('resolved', `the resolved tree is not that of '${candidate}' at ${hosted}`)
    }
    const problems = sourceProblems(tree, checked.value)
    if (!problems.ok) return problems
    analysis = analyzeTree(tree, { chainLabel: CHAIN_LABEL, maxStringLength: 255, maxRecordBytes: 512 })
    lookups = analysis.lookups
  } else if (lookups > 0 && config.sources.some((s) => s.kind === 'include')) {
    caveats.push('the include tree was not resolved: lookups inside included records are not counted')
  }
  // Long lists of networks are chained too (§3.4: keep answers within 512 octets); each chained
  // record costs one include.
  const plain = chainRecords({
    domain: hosted,
    pieces: evaluationOrder(config.sources).map((i) => {
      const term = sourceTerm(config.sources[i]!)
      return { plus: true, root: term, chained: term }
    }),
    ending: { root: config.all, chained: config.all },
    exp: null,
    label: CHAIN_LABEL,
    maxStringLength: 255,
    maxRecordBytes: 512,
  }).records
  const plainLookups = lookups + plain.length - 1
  // Only names can be flattened: a list of networks alone is already as flat as it gets.
  const flatten =
    networkSources < config.sources.length &&
    (config.flatten === 'always' || (config.flatten === 'auto' && plainLookups > budget))
  const warnings = (analysis?.warnings ?? []).filter(
    (w) =>
      w.severity !== 'info' && !HANDLED.has(w.code) && !(flatten && w.code === 'void_lookup_limit_exceeded'),
  )
  caveats.push(...warnings.map((w) => `${w.domain}${w.term ? ` '${w.term}'` : ''}: ${w.message}`))
  if (!flatten) {
    if (plainLookups > budget) return limitExceeded(plainLookups, checked.value)
    const records = published(plain)
    return ok({ records, lookups: plainLookups, flattened: false, networks: networkSources, caveats })
  }
  const flat = analysis?.flattened ?? null
  if (flat === null)
    return invalid('resolved', 'flattening needs the resolved include tree of the candidate record')
  if (flat.lookupsAfter > budget) return limitExceeded(flat.lookupsAfter, checked.value)
  caveats.push(...flat.caveats)
  caveats.push(...flat.unflattenable.map((u) => `${u.domain} '${u.term}' is kept as written: ${u.reason}`))
  if (flat.lookupsSaved > 0) {
    caveats.push("flattened: the senders' networks are copied as of now; re-plan when their records change")
  }
  const records = published(flat.records)
  return ok({ records, lookups: flat.lookupsAfter, flattened: true, networks: flat.networks.length, caveats })
}

/** The DNS as it will be once the candidate is served: its TXT answered, everything else asked. */
function withCandidate(dns: DnsResolver, name: string, text: string): DnsResolver {
  return {
    resolve(question, type) {
      if (type !== 'TXT' || normalizeName(question) !== name) return dns.resolve(question, type)
      const record = { type: 'TXT' as const, strings: splitTxtStrings(text), ttl: 0 }
      return Promise.resolve({ status: 'ok', records: [record], authenticated: false })
    },
  }
}

/** Resolves the candidate record's include tree through the DNS port and builds the records. */
export async function planManagedRecord(
  deps: { dns: DnsResolver },
  input: ManagedRecordInput,
): Promise<Result<HostedRecords>> {
  const checked = checkInput(input)
  if (!checked.ok) return checked
  const { hosted, config } = checked.value
  const dns = withCandidate(deps.dns, hosted, candidateRecord(config))
  const resolved = await resolveSpfTree({ dns }, hosted)
  return buildManagedRecord({ ...input, resolved })
}
