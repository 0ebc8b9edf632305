import type { EvaluationDeps } from '../../domain/alerts/evaluation.ts'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { Stores } from './stores.ts'

/** What alert evaluation needs, for the worker's jobs (and tests that evaluate). */
export function alertEvaluationDeps(
  s: Pick<Stores, 'alerts' | 'alertFacts' | 'operationsFacts' | 'figures' | 'reportSourceFacts'>,
  runtime: { dns: DnsResolver; now: () => Date },
): EvaluationDeps {
  return {
    alerts: s.alerts,
    facts: s.alertFacts,
    operations: s.operationsFacts,
    figures: s.figures,
    reportSources: s.reportSourceFacts,
    dns: runtime.dns,
    now: runtime.now,
  }
}
