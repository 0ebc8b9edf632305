import { SEVERITY_RANK } from '../../posture/dmarc-issues.ts'
import type { Posture, PostureFindings, PostureIssue } from '../../posture/posture.ts'
import type { Severity } from '../../shared/finding.ts'
import type { AlertCandidate, AlertType, RuleScope } from '../alert.ts'
import { dkimAlerts, dkimScope } from './dkim.ts'

// Posture rules: a posture check's issues (domain/posture/*-issues.ts, stable codes) become alerts.
// The check already judged the records; these rules only decide which issues deserve an alert and
// take the evidence from the findings, so the status page and the alerts never disagree.

export interface PostureAlertInput {
  posture: Posture
  findings: PostureFindings
}

export const POSTURE_ALERT_TYPES = [
  'dmarc_missing',
  'dmarc_invalid',
  'spf_missing',
  'spf_permerror',
  'spf_too_many_lookups',
  'spf_void_lookups',
  'spf_permissive_all',
  'dkim_selector_revoked',
  'dkim_weak_key',
  'dkim_missing',
] as const satisfies readonly AlertType[]

/** Issues that leave the domain with no usable DMARC record although one is published (RFC 9989 §4.10). */
export const DMARC_UNUSABLE_CODES = ['dmarc.multiple_records', 'dmarc.policy_record_unusable']
/**
 * Record errors that change what receivers apply: a missing or invalid p/sp/np makes the record
 * p=none (RFC 9989 §4.10.1), a repeated tag may void it (RFC 6376 §3.2 tag lists), a bad tag or
 * URI is ignored. Flags that fall back to their default (adkim, t, psd...) stay posture issues.
 */
export const DMARC_ERROR_CODES = [
  'dmarc.missing_policy',
  'dmarc.invalid_policy',
  'dmarc.invalid_subdomain_policy',
  'dmarc.invalid_nonexistent_policy',
  'dmarc.duplicate_tag',
  'dmarc.invalid_tag_syntax',
  'dmarc.invalid_uri',
]
/** Every one makes SPF evaluation a permerror (RFC 7208 §4.5, §5.2, §6.1), so DMARC gets no SPF pass. */
export const SPF_PERMERROR_CODES = [
  'spf.multiple_records',
  'spf.syntax_error',
  'spf.include_loop',
  'spf.include_not_found',
  'spf.redirect_not_found',
  'spf.invalid_target',
]

const worst = (issues: readonly { severity: Severity }[]): Severity =>
  issues.reduce<Severity>((w, i) => (SEVERITY_RANK[i.severity] > SEVERITY_RANK[w] ? i.severity : w), 'info')

const problems = (issues: readonly PostureIssue[]) => issues.map(({ code, message }) => ({ code, message }))

const firstFix = (issues: readonly PostureIssue[]) => {
  const fix = issues.find((i) => i.fix !== undefined)?.fix
  return fix === undefined ? {} : { fix }
}

function dmarcAlerts({ posture, findings }: PostureAlertInput): AlertCandidate[] {
  const of = (codes: readonly string[]) => posture.issues.filter((i) => codes.includes(i.code))
  const domain = posture.domain
  const { dmarc } = findings
  const unusable = of(DMARC_UNUSABLE_CODES)
  const missing = of(['dmarc.no_record'])
  if (unusable.length > 0) {
    return [
      {
        type: 'dmarc_invalid',
        subject: '',
        severity: worst(unusable),
        title: `The DMARC record of ${domain} is unusable: receivers apply no DMARC policy`,
        details: {
          evidence: {
            queries: dmarc.queries.map(({ name, outcome, record }) => ({ name, outcome, record })),
            problems: [
              ...problems(unusable),
              ...dmarc.recordFindings.map(({ code, message }) => ({ code, message })),
            ],
          },
          remedy: `Publish exactly one valid DMARC record at _dmarc.${dmarc.policyDomain ?? domain} (RFC 9989 §4.7, §4.10): receivers ignore several records or one they cannot parse.`,
          // No fix: the starter record of `dmarc.no_record` (p=none) could weaken what was meant.
        },
      },
    ]
  }
  if (missing.length > 0) {
    return [
      {
        type: 'dmarc_missing',
        subject: '',
        severity: worst(missing),
        title: `No DMARC record for ${domain}`,
        details: {
          evidence: {
            queried: dmarc.queries.map((q) => q.name),
            organizationalDomain: dmarc.organizationalDomain,
          },
          remedy: `Publish a DMARC record at _dmarc.${domain} with p=none and a rua address to collect reports, then move to quarantine and reject (RFC 9989 §4.7). Without one, anyone can send mail as ${domain} and receivers are not asked to act.`,
          ...firstFix(missing),
        },
      },
    ]
  }
  const errors = of(DMARC_ERROR_CODES)
  if (errors.length === 0) return []
  return [
    {
      type: 'dmarc_invalid',
      subject: '',
      severity: worst(errors),
      title: `The DMARC record of ${domain} has ${errors.length === 1 ? 'an error' : `${errors.length} errors`}`,
      details: {
        evidence: {
          name: `_dmarc.${dmarc.policyDomain}`,
          record: dmarc.rawRecord,
          problems: problems(errors),
        },
        remedy:
          'Correct the record: receivers read a missing or invalid p, sp or np as p=none, and skip tags and URIs they cannot parse (RFC 9989 §4.7, §4.10.1).',
      },
    },
  ]
}

function spfAlerts({ posture, findings }: PostureAlertInput): AlertCandidate[] {
  const has = (code: string) => posture.issues.some((i) => i.code === code)
  const of = (codes: readonly string[]) => posture.issues.filter((i) => codes.includes(i.code))
  const warnings = (codes: readonly string[]) =>
    findings.spf.warnings
      .filter((w) => codes.includes(`spf.${w.code}`))
      .map(({ code, domain, term, message }) => ({ code, domain, term: term ?? null, message }))
  const { spf } = findings
  const domain = posture.domain
  const out: AlertCandidate[] = []
  const missing = of(['spf.no_record'])
  if (missing.length > 0) {
    out.push({
      type: 'spf_missing',
      subject: '',
      severity: worst(missing),
      title: `No SPF record for ${domain}`,
      details: {
        evidence: { name: domain },
        remedy:
          'Publish one SPF record listing every service that sends as this domain (RFC 7208 §3); without it no mail can pass DMARC through SPF and receivers cannot tell your servers from others.',
        ...firstFix(missing),
      },
    })
  }
  const permerror = of(SPF_PERMERROR_CODES)
  if (permerror.length > 0) {
    out.push({
      type: 'spf_permerror',
      subject: '',
      severity: worst(permerror),
      title: `The SPF record of ${domain} evaluates to permerror`,
      details: {
        evidence: { record: spf.record, problems: warnings(SPF_PERMERROR_CODES) },
        remedy:
          'Fix the record or the include/redirect it names: a permerror counts as no SPF pass, so mail relying on SPF fails DMARC (RFC 7208 §2.6.7).',
      },
    })
  }
  // A loop also exceeds the lookup limit; it is reported once, as the permerror it is.
  const overLimit = of(['spf.lookup_limit_exceeded'])
  if (overLimit.length > 0 && !has('spf.include_loop')) {
    out.push({
      type: 'spf_too_many_lookups',
      subject: '',
      severity: worst(overLimit),
      title: `The SPF record of ${domain} needs ${spf.lookups} DNS lookups (limit ${spf.lookupLimit})`,
      details: {
        evidence: { record: spf.record, lookups: spf.lookups, limit: spf.lookupLimit },
        remedy:
          'Remove unused includes or flatten the record (let dmarcwatch manage it): past 10 DNS-querying terms evaluation ends in permerror (RFC 7208 §4.6.4).',
        ...firstFix(overLimit),
      },
    })
  }
  const voids = of(['spf.void_lookup_limit_exceeded'])
  if (voids.length > 0) {
    out.push({
      type: 'spf_void_lookups',
      subject: '',
      severity: worst(voids),
      title: `The SPF record of ${domain} makes ${spf.voidLookups} void lookups (limit ${spf.voidLookupLimit})`,
      details: {
        evidence: {
          record: spf.record,
          voidLookups: spf.voidLookups,
          limit: spf.voidLookupLimit,
          terms: warnings(['spf.void_lookup']).map(({ domain, term }) => ({ domain, term })),
        },
        remedy:
          'Remove the terms whose names no longer exist or have no address: more than 2 void lookups end in permerror (RFC 7208 §4.6.4).',
      },
    })
  }
  const permissive = of(['spf.all_pass', 'spf.all_neutral'])
  if (permissive.length > 0) {
    const pass = has('spf.all_pass')
    out.push({
      type: 'spf_permissive_all',
      subject: '',
      severity: worst(permissive),
      title: pass
        ? `The SPF record of ${domain} authorises every host (+all)`
        : `The SPF record of ${domain} ends in ?all: unlisted hosts get neutral`,
      details: {
        evidence: {
          record: spf.record,
          terms: warnings(['spf.all_pass', 'spf.all_neutral']).map(({ domain, term }) => ({ domain, term })),
        },
        remedy:
          'End the record with ~all or -all: +all makes every host on the Internet pass SPF, ?all (neutral) gives receivers nothing to act on (RFC 7208 §5.1, §8.2).',
        ...firstFix(permissive),
      },
    })
  }
  return out
}

export function postureAlerts(input: PostureAlertInput): AlertCandidate[] {
  return [...dmarcAlerts(input), ...spfAlerts(input), ...dkimAlerts(input.posture, input.findings)]
}

/**
 * A record that could not be read (DNS failure) was not evaluated: its alerts stay as they are.
 * Any SPF DNS error counts, since a missing branch changes the lookup counts and permerror causes.
 */
export function postureScope({ posture, findings }: PostureAlertInput): RuleScope {
  const rulesEvaluated: AlertType[] = []
  if (!posture.issues.some((i) => i.code === 'dmarc.lookup_failed'))
    rulesEvaluated.push('dmarc_missing', 'dmarc_invalid')
  if (!findings.spf.warnings.some((w) => w.code === 'dns_error'))
    rulesEvaluated.push(
      'spf_missing',
      'spf_permerror',
      'spf_too_many_lookups',
      'spf_void_lookups',
      'spf_permissive_all',
    )
  const dkim = dkimScope(posture, findings)
  return { rulesEvaluated: [...rulesEvaluated, ...dkim.rulesEvaluated], subjects: dkim.subjects ?? {} }
}
