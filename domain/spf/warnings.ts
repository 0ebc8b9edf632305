// Findings about a resolved SPF tree, with stable codes that the API and posture checks can key on.

import type { NetworkOverlap } from './analysis.ts'
import type { ResolvedNode } from './include-tree.ts'
import { MAX_DNS_TERMS, MAX_VOID_LOOKUPS } from './limits.ts'

export type SpfWarningCode =
  | 'no_record'
  | 'multiple_records'
  | 'syntax_error'
  | 'dns_error'
  | 'include_not_found'
  | 'redirect_not_found'
  | 'include_loop'
  | 'invalid_target'
  | 'all_pass'
  | 'all_neutral'
  | 'no_all'
  | 'redirect_ignored'
  | 'ptr_used'
  | 'mx_limit_exceeded'
  | 'lookup_limit_exceeded'
  | 'void_lookup_limit_exceeded'
  | 'void_lookup'
  | 'duplicate_network'
  | 'overlapping_network'
  | 'record_too_long'
  | 'unknown_modifier'
  | 'analysis_truncated'

export interface SpfWarning {
  code: SpfWarningCode
  /** error: evaluation gives permerror/temperror or authorises everyone; warning: risky; info: tidy-up. */
  severity: 'error' | 'warning' | 'info'
  domain: string
  term?: string
  message: string
}

// RFC 7208 §3.4: records should fit a 512-octet UDP answer; the rest of the answer needs ~60 octets.
const COMFORTABLE_RECORD_LENGTH = 450

/**
 * A missing, looping or unusable target is fixed in the record that names it, so those findings
 * are reported against the parent; a broken record is reported against its own domain.
 */
function statusWarning(
  node: ResolvedNode,
  parent: string | null,
  term: string | undefined,
): SpfWarning | null {
  const owner =
    parent !== null && ['none', 'loop', 'invalid_name'].includes(node.status) ? parent : node.domain
  const at = { domain: owner, ...(term === undefined ? {} : { term }) }
  const reason = node.reason ?? ''
  switch (node.status) {
    case 'ok':
      return null
    case 'none':
      if (node.via === 'root') return { code: 'no_record', severity: 'error', ...at, message: reason }
      return {
        code: node.via === 'include' ? 'include_not_found' : 'redirect_not_found',
        severity: 'error',
        ...at,
        message: `${reason}: the ${node.via} is a permerror (RFC 7208 §5.2, §6.1)`,
      }
    case 'multiple_records':
      return { code: 'multiple_records', severity: 'error', ...at, message: reason }
    case 'syntax_error':
      return { code: 'syntax_error', severity: 'error', ...at, message: reason }
    case 'dns_error':
      return { code: 'dns_error', severity: 'warning', ...at, message: reason }
    case 'loop':
      return { code: 'include_loop', severity: 'error', ...at, message: reason }
    case 'invalid_name':
      return { code: 'invalid_target', severity: 'error', ...at, message: reason }
    case 'truncated':
      return { code: 'analysis_truncated', severity: 'info', ...at, message: reason }
  }
}

function nodeWarnings(node: ResolvedNode, parent: string | null, via: string | undefined, out: SpfWarning[]) {
  const status = statusWarning(node, parent, via)
  if (status !== null) out.push(status)
  const record = node.record
  if (record === null) return
  const domain = node.domain
  if (record.text.length > COMFORTABLE_RECORD_LENGTH) {
    const message = `the record is ${record.text.length} characters; answers over 512 octets need TCP (RFC 7208 §3.4)`
    out.push({ code: 'record_too_long', severity: 'warning', domain, message })
  }
  for (const term of node.terms) {
    const at = { domain, term: term.text }
    if (term.kind === 'all' && term.qualifier === '+') {
      out.push({
        code: 'all_pass',
        severity: 'error',
        ...at,
        message: '+all authorises every host on the Internet',
      })
    }
    if (term.kind === 'all' && term.qualifier === '?' && node.via === 'root') {
      const message = '?all gives neutral for unlisted hosts, which receivers treat like no policy'
      out.push({ code: 'all_neutral', severity: 'warning', ...at, message })
    }
    if (term.kind === 'ptr') {
      const message = 'ptr is slow and unreliable; RFC 7208 §5.5 says it SHOULD NOT be used'
      out.push({ code: 'ptr_used', severity: 'warning', ...at, message })
    }
    if (term.problem !== null) {
      const severity = term.problem.code === 'dns_error' ? 'warning' : 'error'
      out.push({ code: term.problem.code, severity, ...at, message: term.problem.message })
    }
    if (term.void4 || term.void6) {
      const family = term.void4 && term.void6 ? 'any client' : term.void4 ? 'IPv4 clients' : 'IPv6 clients'
      const message = `the lookup finds nothing for ${family} and counts as a void lookup (RFC 7208 §4.6.4)`
      out.push({ code: 'void_lookup', severity: 'info', ...at, message })
    }
    if (term.child !== null) nodeWarnings(term.child, domain, term.text, out)
  }
  if (node.via === 'root' && !record.hasAll && record.redirect === null) {
    const message = 'no "all" mechanism or redirect: unlisted hosts get neutral (RFC 7208 §4.7)'
    out.push({ code: 'no_all', severity: 'warning', domain, message })
  }
  if (record.redirect !== null && record.hasAll) {
    const message = 'redirect= is ignored because the record has an "all" mechanism (RFC 7208 §6.1)'
    out.push({
      code: 'redirect_ignored',
      severity: 'warning',
      domain,
      term: `redirect=${record.redirect.text}`,
      message,
    })
  }
  for (const modifier of record.unknownModifiers) {
    const message = `unknown modifier '${modifier.name}' is ignored by receivers (RFC 7208 §6)`
    out.push({ code: 'unknown_modifier', severity: 'info', domain, term: modifier.text, message })
  }
}

function hasLoop(node: ResolvedNode): boolean {
  return node.status === 'loop' || node.terms.some((term) => term.child !== null && hasLoop(term.child))
}

export function spfWarnings(
  root: ResolvedNode,
  totals: { lookups: number; voidLookups: number; overlaps: readonly NetworkOverlap[] },
): SpfWarning[] {
  const out: SpfWarning[] = []
  nodeWarnings(root, null, undefined, out)
  const domain = root.domain
  if (totals.lookups > MAX_DNS_TERMS || hasLoop(root)) {
    const count = hasLoop(root) ? 'an include/redirect loop' : `${totals.lookups} DNS-querying terms`
    const message = `${count} exceeds the limit of ${MAX_DNS_TERMS}: evaluation ends in permerror (RFC 7208 §4.6.4)`
    out.push({ code: 'lookup_limit_exceeded', severity: 'error', domain, message })
  }
  if (totals.voidLookups > MAX_VOID_LOOKUPS) {
    const message = `${totals.voidLookups} void lookups exceed the limit of ${MAX_VOID_LOOKUPS}: permerror (RFC 7208 §4.6.4)`
    out.push({ code: 'void_lookup_limit_exceeded', severity: 'error', domain, message })
  }
  for (const overlap of totals.overlaps) {
    const { network, within } = overlap
    const duplicate = overlap.kind === 'duplicate'
    const message = duplicate
      ? `${network.network} (${network.term} in ${network.domain}) is listed again by ${within.term} in ${within.domain}`
      : `${network.network} (${network.term} in ${network.domain}) is inside ${within.network} (${within.term} in ${within.domain})`
    const code = duplicate ? 'duplicate_network' : 'overlapping_network'
    out.push({ code, severity: 'info', domain: network.domain, term: network.term, message })
  }
  return out
}
