import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { SpfAutomationDeps } from '../../domain/spf-management/proposals.ts'
import { reflattenDue } from '../../domain/spf-management/reflatten.ts'
import type { SourceDeps } from '../../domain/spf-management/source-use-cases.ts'
import type { ProcessStores } from './stores.ts'

/**
 * The SPF management use cases' deps, built once per process and handed to the API routes and the
 * dashboard alike, so both write through the same store, DNS and DNS-write budget, and keep the
 * proposals of `assisted` domains in the same store (domain/spf-management/proposals.ts).
 */
export function spfUseCaseDeps(
  s: Pick<ProcessStores, 'spf' | 'spfActivity' | 'spfProposals'>,
  runtime: { dns: DnsResolver; now: () => Date; config: { spf: { zone: string } } },
  dnsWrites: SourceDeps['dnsWrites'],
): SpfAutomationDeps {
  return {
    store: s.spf,
    dns: runtime.dns,
    now: runtime.now,
    zone: runtime.config.spf.zone,
    activity: s.spfActivity,
    dnsWrites,
    proposals: s.spfProposals,
  }
}

/**
 * The scheduled re-flatten's step (`spf.reflatten`, src/jobs/spf.ts): re-plans managed records
 * planned more than `olderThanHours` ago through the process's SPF store; returns how many it
 * looked at (domain/spf-management/reflatten.ts).
 */
export function reflattenStep(
  s: Pick<ProcessStores, 'spf'>,
  runtime: { dns: DnsResolver; now: () => Date; config: { spf: { zone: string } } },
): (input: { olderThanHours: number; limit: number }) => Promise<number> {
  const deps = { store: s.spf, dns: runtime.dns, now: runtime.now, zone: runtime.config.spf.zone }
  return (input) => reflattenDue(deps, input)
}
