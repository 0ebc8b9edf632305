import type { DomainMatch } from './process-message.ts'

// What the report job needs besides the message store and the aggregate writer
// (domain/reports/store-aggregate.ts): adapters are built in src/compose/ingest.ts.

/**
 * The account's verified domain a report's policy domain belongs to: the policy domain itself,
 * else its organizational domain (docs/ingestion.md); a reason to quarantine otherwise.
 */
export type ReportDomainLookup = (accountId: string, policyDomain: string) => Promise<DomainMatch>

/** Looks up reverse DNS for up to `limit` new source IPs; answers how many it looked up. */
export type SourceEnricher = (input: { limit: number }) => Promise<number>
