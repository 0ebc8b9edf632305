import { discoverDmarc } from '../dmarc/discovery.ts'
import type { DnsResolver } from '../dns/ports.ts'
import { txtValues } from '../dns/txt.ts'
import { type DomainEvent, domainVerified } from '../events/event.ts'
import { CONTROL_CHARACTERS } from '../shared/control-characters.ts'
import type { Result } from '../shared/result.ts'
import { fail, invalid, ok } from '../shared/result.ts'
import { dmarcProof } from './dmarc-proof.ts'
import { type Domain, type VerificationProof, verificationRecord } from './domain.ts'
import type { DomainStore } from './ports.ts'
import { getDomain } from './use-cases.ts'

export interface VerificationCheck {
  verified: boolean
  /** Which proof verified the domain (docs/api.md); null while it is not verified. */
  proof: VerificationProof | null
  /** The TXT values found at the verification name, so a user can see what is wrong. */
  found: string[]
  message: string
  /** Report emails that were waiting for this verification and are queued again now. */
  requeued: number
}

export interface VerificationStore {
  /**
   * In one transaction: sets verified_at and how, writes the event to the outbox and re-queues the
   * domain's messages quarantined as `domain_not_verified` (docs/ingestion.md). Only the transition
   * does anything: verifying a verified domain changes nothing (requeued 0). Null when no such domain.
   */
  markVerified(
    accountId: string,
    name: string,
    mark: { event: DomainEvent; proof: VerificationProof; reason: string | null },
  ): Promise<{ domain: Domain; requeued: number } | null>
}

export interface VerificationDeps {
  domains: DomainStore
  verifications: VerificationStore
  /** Should not be a cache: a user who just published a record must not wait out a cached NXDOMAIN. */
  dns: DnsResolver
  /** The account's report address, for the DMARC proof; without it only the TXT record counts. */
  reportAddress?: (accountId: string) => Promise<string>
}

const MAX_REASON_LENGTH = 500

const requeuedNote = (n: number) =>
  n === 0
    ? ''
    : ` ${n} report ${n === 1 ? 'email that was' : 'emails that were'} waiting for it ${n === 1 ? 'is' : 'are'} queued again.`

const PROVEN_BY: Record<VerificationProof, string> = {
  dns_txt: 'the verification TXT record',
  dmarc_rua: 'the DMARC record, whose rua names this account’s report address',
  dmarc_ruf: 'the DMARC record, whose ruf names this account’s report address',
  operator: 'the operator, without a DNS proof',
}

/** Marks a domain verified by a proof already found (the posture check's DMARC record, the operator). */
export async function markDomainVerified(
  deps: { domains: DomainStore; verifications: VerificationStore },
  input: { accountId: string; name: string; proof: VerificationProof; reason?: string | null; now: Date },
): Promise<Result<{ domain: Domain; check: VerificationCheck }>> {
  const found = await getDomain(deps, input.accountId, input.name)
  if (!found.ok) return found
  const domain = found.value
  if (domain.verifiedAt !== null) return ok({ domain, check: alreadyVerified(domain) })
  const reason = input.reason?.trim() || null
  if (input.proof === 'operator' && reason === null)
    return invalid('reason', 'Say why the domain is trusted without a DNS proof.')
  if (reason !== null && (reason.length > MAX_REASON_LENGTH || CONTROL_CHARACTERS.test(reason)))
    return invalid('reason', `The reason is one line of at most ${MAX_REASON_LENGTH} characters.`)
  const marked = await deps.verifications.markVerified(input.accountId, domain.name, {
    event: domainVerified(domain.name, input.now),
    proof: input.proof,
    reason,
  })
  if (marked === null) return fail({ code: 'domain_not_found' })
  // A concurrent verification may have won: it then reports its own proof, and this one requeued none.
  const proof = marked.domain.verifiedBy ?? input.proof
  return ok({
    domain: marked.domain,
    check: {
      verified: true,
      proof,
      found: [],
      message: `Ownership verified by ${PROVEN_BY[proof]}.${requeuedNote(marked.requeued)}`,
      requeued: marked.requeued,
    },
  })
}

function alreadyVerified(domain: Domain): VerificationCheck {
  return {
    verified: true,
    proof: domain.verifiedBy,
    found: [],
    message: 'The domain is already verified.',
    requeued: 0,
  }
}

/**
 * Ownership is proven by TXT `_dmarcwatch.<name>` = `dmarcwatch-verify=<token>`, or by the domain's
 * DMARC record naming the account's report address in rua or ruf (domain/domains/dmarc-proof.ts;
 * docs/api.md). Both are looked up at once. Verifying an already verified domain changes nothing
 * and sends no second `domain.verified`.
 */
export async function verifyDomain(
  deps: VerificationDeps,
  input: { accountId: string; name: string; now: Date },
): Promise<Result<{ domain: Domain; check: VerificationCheck }>> {
  const found = await getDomain(deps, input.accountId, input.name)
  if (!found.ok) return found
  const domain = found.value
  if (domain.verifiedAt !== null) return ok({ domain, check: alreadyVerified(domain) })
  const { txtName, txtValue } = verificationRecord(domain)
  const [answer, dmarc, address] = await Promise.all([
    deps.dns.resolve(txtName, 'TXT'),
    deps.reportAddress ? discoverDmarc({ dns: deps.dns }, domain.name) : null,
    deps.reportAddress?.(input.accountId) ?? null,
  ])
  // RFC 7208 §3.3 style: the strings of one TXT record are one value.
  const values = answer.status === 'timeout' || answer.status === 'error' ? [] : txtValues(answer)
  const proof: VerificationProof | null = values.some((value) => value.trim() === txtValue)
    ? 'dns_txt'
    : dmarc !== null && address !== null
      ? (dmarcProof(dmarc, address)?.proof ?? null)
      : null
  if (proof !== null) {
    return markDomainVerified(deps, { accountId: input.accountId, name: domain.name, proof, now: input.now })
  }
  const txtPart =
    answer.status === 'timeout' || answer.status === 'error'
      ? `The DNS lookup of ${txtName} ${answer.status === 'timeout' ? 'timed out' : `failed (${answer.reason})`}.`
      : values.length === 0
        ? `No TXT record at ${txtName}.`
        : `The TXT record at ${txtName} does not hold "${txtValue}".`
  const publish = `Publish ${txtName} TXT "${txtValue}"`
  const message =
    dmarc === null || address === null
      ? `${txtPart} ${publish} and try again.`
      : `${txtPart} ${
          dmarc.record === null
            ? dmarc.complete
              ? 'No DMARC record applies to the domain.'
              : 'Its DMARC record could not be read (DNS failure).'
            : `Its DMARC record does not name ${address} in rua or ruf.`
        } ${publish}, or add mailto:${address} to the rua of _dmarc.${domain.name}, and try again.`
  return ok({ domain, check: { verified: false, proof: null, found: values, message, requeued: 0 } })
}
