import { encodeBase32LowerCaseNoPadding } from '@oslojs/encoding'
import type { RandomBytes } from '../shared/random.ts'

// docs/api.md "Domains": manual (monitor and alert), assisted (prepare changes, wait for approval),
// automatic (apply SPF updates and advance the DMARC policy when safe).
export const AUTOMATION_LEVELS = ['manual', 'assisted', 'automatic'] as const
export type AutomationLevel = (typeof AUTOMATION_LEVELS)[number]

export const DMARC_POLICIES = ['none', 'quarantine', 'reject', 'missing'] as const
export type DmarcPolicy = (typeof DMARC_POLICIES)[number]

export type AreaStatus = 'unknown' | 'ok' | 'warning' | 'error' | 'missing'

/** The posture summary stored with a domain; filled by the posture checks, `unknown` until the first one. */
export interface DomainStatus {
  dmarc: AreaStatus
  spf: AreaStatus
  dkim: AreaStatus
  grade: string | null
  checkedAt: Date | null
}

/**
 * How ownership was proven (docs/api.md, "Verifying a domain"): the TXT record at
 * `_dmarcwatch.<name>`, the domain's DMARC record naming the account's report address in rua or
 * ruf, or the operator's word (`bun run cli domain verify --without-dns`).
 */
export const VERIFICATION_PROOFS = ['dns_txt', 'dmarc_rua', 'dmarc_ruf', 'operator'] as const
export type VerificationProof = (typeof VERIFICATION_PROOFS)[number]

export interface Domain {
  name: string
  automationLevel: AutomationLevel
  organizationId: number | null
  verificationToken: string
  verifiedAt: Date | null
  verifiedBy: VerificationProof | null
  /** DKIM selectors the owner configured; checked beside learned and common ones. */
  dkimSelectors: string[]
  dmarcPolicy: DmarcPolicy | null
  status: DomainStatus
  createdAt: Date
}

export const UNCHECKED_STATUS: DomainStatus = {
  dmarc: 'unknown',
  spf: 'unknown',
  dkim: 'unknown',
  grade: null,
  checkedAt: null,
}

// docs/api.md: ownership is proven by TXT `_dmarcwatch.<name>` = `dmarcwatch-verify=<token>`.
export const VERIFICATION_LABEL = '_dmarcwatch'
export const VERIFICATION_PREFIX = 'dmarcwatch-verify='

export function newVerificationToken(random: RandomBytes): string {
  return encodeBase32LowerCaseNoPadding(random(20))
}

export function verificationRecord(domain: Pick<Domain, 'name' | 'verificationToken'>): {
  txtName: string
  txtValue: string
} {
  return {
    txtName: `${VERIFICATION_LABEL}.${domain.name}`,
    txtValue: `${VERIFICATION_PREFIX}${domain.verificationToken}`,
  }
}

// RFC 6376 §3.1: a selector is one or more DNS labels.
const SELECTOR = /^(?!-)[a-z0-9_-]{1,63}(?<!-)(\.(?!-)[a-z0-9_-]{1,63}(?<!-))*$/
export const MAX_DKIM_SELECTORS = 20

export function normalizeSelectors(
  input: string[],
): { ok: true; selectors: string[] } | { ok: false; reason: string } {
  if (input.length > MAX_DKIM_SELECTORS)
    return { ok: false, reason: `At most ${MAX_DKIM_SELECTORS} selectors.` }
  const selectors = [...new Set(input.map((s) => s.trim().toLowerCase()))]
  const bad = selectors.find((s) => !SELECTOR.test(s) || s.length > 200)
  if (bad !== undefined) return { ok: false, reason: `"${bad}" is not a DKIM selector (DNS labels only).` }
  return { ok: true, selectors }
}
