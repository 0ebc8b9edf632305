import type { DnsAnswer, DnsResolver } from '../dns/ports.ts'
import { txtValues } from '../dns/txt.ts'
import type { Severity } from '../shared/finding.ts'
import { mapBounded } from '../shared/map-bounded.ts'
import {
  type DkimFinding,
  type DkimKeyRecord,
  isDkimKeyRecordText,
  parseDkimKeyRecord,
} from './key-record.ts'

// DKIM keys cannot be listed (RFC 6376 §3.6.2.1 publishes each at <selector>._domainkey.<domain>),
// so we probe: the selectors the user configured, those seen in DMARC reports, and common ones.

export interface CommonSelector {
  selector: string
  provider: string
}

/** Selectors that providers publish under fixed names. Amazon SES (Easy DKIM) and Postmark use per-customer token or date selectors that cannot be guessed; `amazonses` is only the legacy TXT verification name. */
export const COMMON_DKIM_SELECTORS: readonly CommonSelector[] = [
  { selector: 'google', provider: 'Google Workspace' },
  { selector: 'selector1', provider: 'Microsoft 365' },
  { selector: 'selector2', provider: 'Microsoft 365' },
  { selector: 'k1', provider: 'Mailchimp / Mandrill, Mailgun' },
  { selector: 'k2', provider: 'Mailchimp / Mandrill' },
  { selector: 'k3', provider: 'Mailchimp / Mandrill' },
  { selector: 'mandrill', provider: 'Mandrill' },
  { selector: 'mte1', provider: 'Mailchimp Transactional' },
  { selector: 's1', provider: 'SendGrid' },
  { selector: 's2', provider: 'SendGrid' },
  { selector: 'smtpapi', provider: 'SendGrid (legacy)' },
  { selector: 'smtp', provider: 'Mailgun' },
  { selector: 'mailo', provider: 'Mailgun' },
  { selector: 'krs', provider: 'Mailgun' },
  { selector: 'pic', provider: 'Mailgun' },
  { selector: 'mx', provider: 'Mailgun, generic' },
  { selector: 'zoho', provider: 'Zoho Mail' },
  { selector: 'zmail', provider: 'Zoho Mail' },
  { selector: 'fm1', provider: 'Fastmail' },
  { selector: 'fm2', provider: 'Fastmail' },
  { selector: 'fm3', provider: 'Fastmail' },
  { selector: 'protonmail', provider: 'Proton Mail' },
  { selector: 'protonmail2', provider: 'Proton Mail' },
  { selector: 'protonmail3', provider: 'Proton Mail' },
  { selector: 'sig1', provider: 'iCloud Mail' },
  { selector: 'hs1', provider: 'HubSpot' },
  { selector: 'hs2', provider: 'HubSpot' },
  { selector: 'zendesk1', provider: 'Zendesk' },
  { selector: 'zendesk2', provider: 'Zendesk' },
  { selector: 'cm', provider: 'Campaign Monitor' },
  { selector: 'everlytickey1', provider: 'Everlytic' },
  { selector: 'everlytickey2', provider: 'Everlytic' },
  { selector: 'ctct1', provider: 'Constant Contact' },
  { selector: 'ctct2', provider: 'Constant Contact' },
  { selector: 'mail', provider: 'Brevo, Yandex, generic' },
  { selector: 'mailjet', provider: 'Mailjet' },
  { selector: 'litesrv', provider: 'MailerLite' },
  { selector: 'resend', provider: 'Resend' },
  { selector: 'intercom', provider: 'Intercom' },
  { selector: 'x', provider: 'MXroute' },
  { selector: 'amazonses', provider: 'Amazon SES (legacy)' },
  { selector: '200608', provider: 'Gmail-style date selector' },
  { selector: '20161025', provider: 'Gmail-style date selector' },
  { selector: '20210112', provider: 'Gmail-style date selector' },
  { selector: '20230601', provider: 'Gmail-style date selector' },
  { selector: 'dkim', provider: 'generic' },
  { selector: 'default', provider: 'generic (cPanel, Plesk)' },
  { selector: 'key1', provider: 'generic' },
  { selector: 'key2', provider: 'generic' },
]

export type SelectorOrigin = 'configured' | 'learned' | 'common'

export interface SelectorCandidate {
  selector: string
  origin: SelectorOrigin
}

// RFC 6376 §3.1: selector = sub-domain *( "." sub-domain )
const SELECTOR = /^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*$/
const DEFAULT_CONCURRENCY = 8

/** The selectors to probe, deduplicated case-insensitively: configured first, then learned, then common. */
export function selectorsToCheck(
  configured: readonly string[],
  learned: readonly string[],
  common: readonly CommonSelector[] = COMMON_DKIM_SELECTORS,
): SelectorCandidate[] {
  const seen = new Set<string>()
  const candidates: SelectorCandidate[] = []
  const take = (selectors: readonly string[], origin: SelectorOrigin) => {
    for (const raw of selectors) {
      const selector = raw.trim().toLowerCase().replace(/\.$/, '')
      if (selector === '' || seen.has(selector)) continue
      seen.add(selector)
      candidates.push({ selector, origin })
    }
  }
  take(configured, 'configured')
  take(learned, 'learned')
  take(
    common.map((entry) => entry.selector),
    'common',
  )
  return candidates
}

export type DkimSelectorsCode =
  | 'selector_missing'
  | 'selector_lookup_failed'
  | 'invalid_selector'
  | 'multiple_key_records'

export interface DkimSelectorsFinding {
  code: DkimSelectorsCode
  severity: Severity
  message: string
}

export type SelectorCheck =
  | {
      status: 'found'
      selector: string
      origin: SelectorOrigin
      name: string
      /** The parsed key; null when the record is unusable (see findings). */
      record: DkimKeyRecord | null
      raw: string
      findings: DkimFinding[]
    }
  | { status: 'missing'; selector: string; origin: SelectorOrigin; name: string }
  | { status: 'temperror'; selector: string; origin: SelectorOrigin; name: string; reason: string }

export interface DkimSelectorsReport {
  domain: string
  checked: number
  /** Found keys, configured selectors that are missing, and failed lookups; absent guesses are left out. */
  selectors: SelectorCheck[]
  findings: DkimSelectorsFinding[]
}

export async function checkDkimSelectors(
  deps: { dns: DnsResolver },
  domain: string,
  selectors: readonly SelectorCandidate[],
  options: { concurrency?: number } = {},
): Promise<DkimSelectorsReport> {
  const zone = domain.trim().toLowerCase().replace(/\.$/, '')
  const findings: DkimSelectorsFinding[] = []
  const valid = selectors.filter((candidate) => {
    if (SELECTOR.test(candidate.selector)) return true
    findings.push({
      code: 'invalid_selector',
      severity: candidate.origin === 'configured' ? 'medium' : 'info',
      message: `"${candidate.selector}" is not a valid DKIM selector (RFC 6376 §3.1).`,
    })
    return false
  })
  const checks = await mapBounded(valid, options.concurrency ?? DEFAULT_CONCURRENCY, (candidate) =>
    checkSelector(deps.dns, zone, candidate),
  )
  const reported: SelectorCheck[] = []
  for (const { check, keyRecords } of checks) {
    const { origin, status, name } = check
    if (status === 'missing' && origin !== 'configured') continue
    if (status === 'temperror' && origin === 'common') continue
    reported.push(check)
    if (status === 'missing') {
      findings.push({
        code: 'selector_missing',
        severity: 'high',
        message: `No DKIM key is published at ${name}, though the selector is configured; mail signed with it fails DKIM.`,
      })
    } else if (status === 'temperror') {
      findings.push({
        code: 'selector_lookup_failed',
        severity: 'low',
        message: `The lookup of ${name} failed; the key could not be checked.`,
      })
    } else if (keyRecords > 1) {
      // RFC 6376 §3.6.2.2 leaves the choice among several key records to the verifier.
      findings.push({
        code: 'multiple_key_records',
        severity: 'medium',
        message: `${name} has ${keyRecords} key records; verifiers may pick any one of them.`,
      })
    }
  }
  return { domain: zone, checked: valid.length, selectors: reported, findings }
}

interface Probe {
  check: SelectorCheck
  /** How many TXT records at the name look like DKIM keys. */
  keyRecords: number
}

async function checkSelector(dns: DnsResolver, domain: string, candidate: SelectorCandidate): Promise<Probe> {
  const name = `${candidate.selector}._domainkey.${domain}`
  const base = { selector: candidate.selector, origin: candidate.origin, name }
  const answer: DnsAnswer = await dns.resolve(name, 'TXT')
  if (answer.status === 'timeout' || answer.status === 'error') {
    const reason = answer.status === 'timeout' ? 'timeout' : answer.reason
    return { check: { ...base, status: 'temperror', reason }, keyRecords: 0 }
  }
  // RFC 6376 §3.6.2.2: the character-strings of one TXT RR are concatenated.
  const texts = txtValues(answer)
  // A TXT record that is not a key (a wildcard SPF record, say) does not count as a key.
  const keys = texts.filter(isDkimKeyRecordText)
  const raw = keys[0]
  if (raw === undefined) return { check: { ...base, status: 'missing' }, keyRecords: 0 }
  const parsed = parseDkimKeyRecord(raw)
  const check: SelectorCheck = {
    ...base,
    status: 'found',
    record: parsed.ok ? parsed.record : null,
    raw,
    findings: parsed.findings,
  }
  return { check, keyRecords: keys.length }
}
