import type { DnsResolver } from '../dns/ports.ts'
import { recordingTtls } from '../dns/ttl-recorder.ts'
import { dmarcProof } from '../domains/dmarc-proof.ts'
import type { Domain } from '../domains/domain.ts'
import type { DomainRef, DomainStore } from '../domains/ports.ts'
import { getDomain } from '../domains/use-cases.ts'
import { markDomainVerified, type VerificationStore } from '../domains/verification.ts'
import { ok, type Result } from '../shared/result.ts'
import { assessPosture } from './assess.ts'
import { collectFindings, type PolicyFetch } from './collect.ts'
import type { Posture, PostureFindings } from './posture.ts'

export interface StoredCheck {
  checkedAt: Date
  /** Until then the result is served without asking DNS again (the smallest TTL behind it). */
  freshUntil: Date
  posture: Posture
  findings: PostureFindings
}

export interface DomainCheckStore {
  latest(accountId: string, name: string): Promise<StoredCheck | null>
  /** Appends to the history and updates the domain's status summary, in one transaction. */
  save(accountId: string, name: string, check: StoredCheck): Promise<void>
  /** Domains never checked or last checked before `before`, across accounts (for the worker). */
  due(before: Date, limit: number): Promise<DomainRef[]>
}

export interface CheckDeps {
  dns: DnsResolver
  fetchMtaStsPolicy: (domain: string) => Promise<PolicyFetch>
  domains: DomainStore
  checks: DomainCheckStore
  /** DKIM selectors seen in the domain's reports. */
  learnedSelectors: (accountId: string, domain: string) => Promise<string[]>
  reportAddress: (accountId: string) => Promise<string>
  /** An unverified domain whose checked DMARC record names the report address is verified with it. */
  verifications: VerificationStore
}

// A result is fresh for the smallest TTL of the data behind it, within these bounds: not less
// than a minute (a TTL of 0 must not turn every request into a check), not more than an hour.
const MIN_FRESH_SECONDS = 60
const MAX_FRESH_SECONDS = 3600

/** Runs a full posture check now and stores it. */
export async function checkDomain(
  deps: CheckDeps,
  input: { accountId: string; name: string; now: Date },
): Promise<Result<{ domain: Domain; check: StoredCheck }>> {
  const found = await getDomain(deps, input.accountId, input.name)
  if (!found.ok) return found
  const domain = found.value
  const recorder = recordingTtls(deps.dns)
  const [learnedSelectors, reportAddress] = await Promise.all([
    deps.learnedSelectors(input.accountId, domain.name),
    deps.reportAddress(input.accountId),
  ])
  const findings = await collectFindings(
    { dns: recorder.dns, fetchMtaStsPolicy: deps.fetchMtaStsPolicy },
    { domain: domain.name, configuredSelectors: domain.dkimSelectors, learnedSelectors, now: input.now },
  )
  const ttl = Math.min(MAX_FRESH_SECONDS, Math.max(MIN_FRESH_SECONDS, recorder.minTtl() ?? MAX_FRESH_SECONDS))
  const check: StoredCheck = {
    checkedAt: input.now,
    freshUntil: new Date(input.now.getTime() + ttl * 1000),
    posture: assessPosture(findings, { reportAddress }),
    findings,
  }
  await deps.checks.save(input.accountId, domain.name, check)
  // The DMARC record just read proves ownership when its rua or ruf names the account's report
  // address (domain/domains/dmarc-proof.ts): the user need not ask for verification separately.
  const proof = domain.verifiedAt === null ? dmarcProof(findings.dmarc, reportAddress) : null
  if (proof !== null) {
    const marked = await markDomainVerified(deps, { ...input, name: domain.name, proof: proof.proof })
    if (marked.ok) return ok({ domain: marked.value.domain, check })
  }
  return ok({ domain, check })
}

/** The latest check while it is fresh, otherwise a new one; `refresh` forces a new one. */
export async function domainStatus(
  deps: CheckDeps,
  input: { accountId: string; name: string; now: Date; refresh: boolean },
): Promise<Result<{ domain: Domain; check: StoredCheck }>> {
  const found = await getDomain(deps, input.accountId, input.name)
  if (!found.ok) return found
  if (!input.refresh) {
    const latest = await deps.checks.latest(input.accountId, found.value.name)
    if (latest !== null && latest.freshUntil.getTime() > input.now.getTime())
      return ok({ domain: found.value, check: latest })
  }
  return checkDomain(deps, { ...input, name: found.value.name })
}
