import type { CheckDeps } from '../../domain/posture/check-domain.ts'
import { createMtaStsFetcher } from '../../infrastructure/http/mta-sts-fetcher.ts'
import type { Runtime } from '../compose.ts'
import type { ProcessStores } from './stores.ts'

/** What posture checks need, for the API and the worker alike. */
export function checkDeps(runtime: Pick<Runtime, 'config' | 'dns'>, s: ProcessStores): CheckDeps {
  const { config } = runtime
  return {
    dns: runtime.dns,
    fetchMtaStsPolicy: createMtaStsFetcher({ dns: runtime.dns, allowPrivate: config.webhookAllowPrivate }),
    domains: s.domains,
    checks: s.checks,
    learnedSelectors: s.reports.learnedSelectors,
    reportAddress: async (accountId) =>
      `${(await s.accounts.ingestKeyOf(accountId)) ?? 'unknown'}@${config.ingestDomain}`,
    verifications: s.verifications,
  }
}

/** What ownership verification needs: the checks' stores with uncached DNS (a fresh record counts). */
export function verificationDeps(runtime: Pick<Runtime, 'verificationDns'>, checks: CheckDeps) {
  return {
    domains: checks.domains,
    verifications: checks.verifications,
    reportAddress: checks.reportAddress,
    dns: runtime.verificationDns,
  }
}
