import type { DkimRecordCode } from '../../dkim/key-record.ts'
import type { SelectorCheck } from '../../dkim/selectors.ts'
import { SEVERITY_RANK } from '../../posture/dmarc-issues.ts'
import type { Posture, PostureFindings } from '../../posture/posture.ts'
import type { Severity } from '../../shared/finding.ts'
import type { AlertCandidate, AlertType, RuleScope } from '../alert.ts'

// DKIM posture rules (RFC 6376, RFC 8301), one alert per selector. Keys cannot be listed
// (RFC 6376 §3.6.2.1), so what is known is what the check probed: configured selectors, those
// learned from reports, and common guesses.

/**
 * Key findings that make signatures worthless or weak: RSA under 1024 bits (verifiers MUST NOT
 * accept them, RFC 8301 §3.2), under 2048 bits (signers SHOULD use at least 2048, RFC 8301 §3.2),
 * and h= without sha256 (rsa-sha1 MUST NOT be used, RFC 8301 §3.1).
 */
export const DKIM_WEAK_KEY_CODES: readonly DkimRecordCode[] = [
  'rsa_key_too_short',
  'rsa_key_below_recommended',
  'sha1_only',
]

type Found = Extract<SelectorCheck, { status: 'found' }>

/**
 * A selector mail is known to be signed with: configured by the owner or seen in reports. A revoked
 * key (empty p=, RFC 6376 §3.6.1) at a guessed selector is usually a retired key, revoked on purpose.
 */
const inUse = (check: SelectorCheck) => check.origin !== 'common'

export function dkimAlerts(posture: Posture, findings: PostureFindings): AlertCandidate[] {
  const domain = posture.domain
  const out: AlertCandidate[] = []
  // In a zone that answers every name under _domainkey, keys "found" at guessed selectors are the
  // wildcard's answer, not keys anyone signs with.
  const found = findings.dkim.selectors.filter(
    (s): s is Found => s.status === 'found' && (!findings.dkim.wildcard || inUse(s)),
  )
  for (const check of found) {
    const evidence = { selector: check.selector, name: check.name, origin: check.origin, record: check.raw }
    if (check.record?.revoked) {
      if (!inUse(check)) continue
      out.push({
        type: 'dkim_selector_revoked',
        subject: check.selector,
        severity: 'high',
        title: `The DKIM key ${check.selector} of ${domain} is revoked`,
        details: {
          evidence,
          remedy: `Mail signed with selector ${check.selector} fails DKIM (an empty p= revokes the key, RFC 6376 §3.6.1). Switch the signer to a selector with a published key, or publish the key again; if the selector is retired, remove it from the domain's dkim_selectors.`,
        },
      })
      continue
    }
    const weak = check.findings.filter((f) => DKIM_WEAK_KEY_CODES.includes(f.code))
    if (weak.length === 0) continue
    const severity = weak.reduce<Severity>(
      (w, f) => (SEVERITY_RANK[f.severity] > SEVERITY_RANK[w] ? f.severity : w),
      'info',
    )
    const bits = check.record?.key?.type === 'rsa' ? check.record.key.bits : null
    out.push({
      type: 'dkim_weak_key',
      subject: check.selector,
      severity,
      title:
        bits !== null && bits < 2048
          ? `The DKIM key ${check.selector} of ${domain} has only ${bits} bits`
          : `The DKIM key ${check.selector} of ${domain} allows only SHA-1`,
      details: {
        evidence: {
          ...evidence,
          keyType: check.record?.keyType ?? null,
          bits,
          problems: weak.map(({ code, message }) => ({ code, message })),
        },
        remedy:
          'Generate a 2048-bit RSA (or Ed25519, RFC 8463) key at the sending service, publish it under a new selector, switch signing to it, then revoke the old one (RFC 8301 §3.2; drop any h=sha1 restriction, §3.1).',
      },
    })
  }
  for (const check of findings.dkim.selectors) {
    if (check.status !== 'missing') continue
    out.push({
      type: 'dkim_missing',
      subject: check.selector,
      severity: 'high',
      title: `No DKIM key at selector ${check.selector} of ${domain}`,
      details: {
        evidence: { selector: check.selector, name: check.name, origin: check.origin },
        remedy: `Publish the key your signer uses at ${check.name}, or correct the configured selector: mail signed with it fails DKIM (RFC 6376 §6.1.2).`,
      },
    })
  }
  if (posture.issues.some((i) => i.code === 'dkim.no_key_found')) {
    out.push({
      type: 'dkim_missing',
      subject: '',
      severity: 'high',
      title: `No DKIM key found for ${domain}`,
      details: {
        evidence: { selectorsChecked: findings.dkim.checked },
        remedy:
          'Enable DKIM signing at each service that sends as this domain and publish its key; if you already sign, add the selectors in the domain settings (dkim_selectors) so the check finds them. Without DKIM, forwarded mail fails DMARC.',
      },
    })
  }
  return out
}

/** Selectors whose lookup failed were not evaluated; nor was the domain-wide "no key" when all failed. */
export function dkimScope(posture: Posture, findings: PostureFindings): RuleScope {
  const failed = findings.dkim.selectors.filter((s) => s.status === 'temperror').map((s) => s.selector)
  const noKeyUnknown = posture.issues.some((i) => i.code === 'dkim.lookup_failed')
  const rulesEvaluated: AlertType[] = ['dkim_selector_revoked', 'dkim_weak_key', 'dkim_missing']
  return {
    rulesEvaluated,
    subjects: {
      dkim_selector_revoked: { except: failed },
      dkim_weak_key: { except: failed },
      dkim_missing: { except: noKeyUnknown ? [...failed, ''] : failed },
    },
  }
}
