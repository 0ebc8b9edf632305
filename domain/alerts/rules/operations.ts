import { formatCount } from '../../sources/figures.ts'
import type { AlertCandidate, AlertType, RuleScope } from '../alert.ts'

// Operations rules: is dmarcwatch itself still seeing and telling? A domain whose reports stopped
// looks exactly like a clean domain, and a webhook that fails silently loses every event after it.
// The webhook and the ingest quarantine belong to the account (one URL per account, docs/webhooks.md; a
// quarantined message is often one whose domain could not be read), so their alerts have no domain.

export const OPERATIONS_ALERT_TYPES = [
  'no_reports',
  'webhook_delivery_failing',
  'ingest_quarantine_growing',
  'dns_write_failing',
  'dns_provider_read_failing',
] as const satisfies readonly AlertType[]

const HOUR_MS = 3_600_000

/** Aggregate reports are daily (RFC 9990; RFC 7489 ri default 86400): three days without one is silence. */
export const NO_REPORTS_DAYS = 3

export interface NoReportsInput {
  domain: string
  now: Date
  /** When the last aggregate report for the domain was stored; null when none ever was. */
  lastReportAt: Date | null
  /** The published DMARC record's rua names this account's report address; null when unknown (DNS failure). */
  ruaPointsHere: boolean | null
  /** Since when reports have been expected: the first check that found rua pointing here, else when the domain was added. */
  expectedSince: Date
}

/**
 * Fires after NO_REPORTS_DAYS of silence when the domain is expected to report: it had reports
 * before (whatever the rua says now: reports may reach us through a polled mailbox), or it never
 * had any but its rua points here, counted from `expectedSince`. A domain that never reported and
 * does not send reports here is the posture's `dmarc.no_rua` / `reports_not_to_dmarcwatch` issue.
 * Receivers send reports only about mail they received, so a domain that sends nothing for three
 * days also goes silent; the alert says so.
 */
export function noReportsAlerts(input: NoReportsInput): AlertCandidate[] {
  const { domain, now, lastReportAt, ruaPointsHere } = input
  if (lastReportAt === null && ruaPointsHere !== true) return []
  const since = lastReportAt ?? input.expectedSince
  const silentHours = Math.floor((now.getTime() - since.getTime()) / HOUR_MS)
  if (silentHours < NO_REPORTS_DAYS * 24) return []
  const days = Math.floor(silentHours / 24)
  const why =
    ruaPointsHere === false
      ? 'The DMARC record no longer sends aggregate reports here (rua): add the address again.'
      : 'Check that the DMARC record still has rua= with your report address and that an external destination is authorised (RFC 9989 §4.7); if the domain sent no mail in that time, there was nothing to report.'
  return [
    {
      type: 'no_reports',
      subject: '',
      severity: 'medium',
      title:
        lastReportAt === null
          ? `No DMARC reports received for ${domain} in the ${days} days since reports were expected`
          : `No DMARC reports received for ${domain} for ${days} days`,
      details: {
        evidence: {
          lastReportAt: lastReportAt?.toISOString() ?? null,
          expectedSince: input.expectedSince.toISOString(),
          silentDays: days,
          ruaPointsHere,
        },
        remedy: `Without reports, failures and spoofing go unseen. ${why}`,
      },
    },
  ]
}

/** Without a last report, whether reports are expected depends on the rua the check could not read. */
export function noReportsScope(input: NoReportsInput): RuleScope {
  return { rulesEvaluated: input.lastReportAt === null && input.ruaPointsHere === null ? [] : ['no_reports'] }
}

export interface WebhookFacts {
  /** Deliveries marked failed (all five attempts, docs/webhooks.md) since the last successful one. */
  failingDeliveries: number
  lastFailureAt: Date | null
  lastError: string | null
}

/** One failed delivery is enough: after five attempts the event is lost unless redelivered (docs/webhooks.md). */
export const WEBHOOK_FAILING_MIN_DELIVERIES = 1

export function webhookAlerts(facts: WebhookFacts): AlertCandidate[] {
  if (facts.failingDeliveries < WEBHOOK_FAILING_MIN_DELIVERIES) return []
  const n = facts.failingDeliveries
  return [
    {
      type: 'webhook_delivery_failing',
      subject: '',
      severity: 'high',
      title: `Webhook deliveries are failing: ${formatCount(n)} ${n === 1 ? 'event' : 'events'} not delivered`,
      details: {
        evidence: {
          failingDeliveries: n,
          lastFailureAt: facts.lastFailureAt?.toISOString() ?? null,
          lastError: facts.lastError,
        },
        remedy:
          'Check that the webhook URL answers 2xx within 10 seconds and verifies the signature with the current secret, then redeliver the failed events (POST /webhooks/deliveries/{id}/redeliver). This alert resolves after a successful delivery.',
      },
    },
  ]
}

export interface QuarantineFacts {
  /** Messages in the account's ingest quarantine now, and 24 hours ago. */
  quarantined: { now: number; dayAgo: number }
}

/** A steady trickle of unparseable reports is normal; ten more in a day means a reporter or we broke. */
export const QUARANTINE_GROWTH_PER_DAY = 10

export function quarantineAlerts({ quarantined }: QuarantineFacts): AlertCandidate[] {
  const growth = quarantined.now - quarantined.dayAgo
  if (growth < QUARANTINE_GROWTH_PER_DAY) return []
  return [
    {
      type: 'ingest_quarantine_growing',
      subject: '',
      severity: 'medium',
      title: `${formatCount(growth)} report messages quarantined in the last day (${formatCount(quarantined.now)} in all)`,
      details: {
        evidence: {
          now: quarantined.now,
          dayAgo: quarantined.dayAgo,
          growth,
          threshold: QUARANTINE_GROWTH_PER_DAY,
        },
        remedy:
          'Open the ingest quarantine (GET /ingest/quarantine): the reasons say whether reports are malformed, too large or addressed to unknown domains. Retry them once the cause is fixed; nothing is lost meanwhile.',
      },
    },
  ]
}

/** Account-wide: both rules read complete counts, so each run evaluates its type. */
export const WEBHOOK_SCOPE: RuleScope = { rulesEvaluated: ['webhook_delivery_failing'] }
export const QUARANTINE_SCOPE: RuleScope = { rulesEvaluated: ['ingest_quarantine_growing'] }

/** A record set whose latest write through a DNS provider failed (dns_provider_writes). */
export interface FailingWrite {
  domain: string
  name: string
  type: string
  /** The record the write was to put there (the previous one is still in place). */
  values: string[]
  actor: string
  error: string | null
  at: Date
}

/**
 * An automated change that could not be written (docs/policy-progression.md "Through a connected DNS
 * provider"): the previous record is still in place and the job retries; the user should know, since
 * a credential or permission problem does not heal itself. One alert per record set; it resolves
 * when a later write of that set succeeds or it is rolled back.
 */
export function dnsWriteAlerts(failing: readonly FailingWrite[]): AlertCandidate[] {
  return failing.map((write) => ({
    type: 'dns_write_failing' as const,
    subject: `${write.name}/${write.type}`,
    severity: 'high' as const,
    title: `The ${write.type} record at ${write.name} could not be written through the DNS provider`,
    details: {
      evidence: {
        domain: write.domain,
        name: write.name,
        type: write.type,
        values: write.values,
        actor: write.actor,
        error: write.error,
        failedAt: write.at.toISOString(),
      },
      remedy:
        'The previous record is still in place and the change is retried. Check the DNS provider connection (POST /dns-providers/authenticate again if its credentials changed) and the write log (GET /dns-providers/writes). This alert resolves after a successful write of the record.',
    },
  }))
}

export const DNS_WRITE_SCOPE: RuleScope = { rulesEvaluated: ['dns_write_failing'] }

/** A DNS provider connection whose last read failed (dns_provider_connections.read_failed_at). */
export interface FailingRead {
  connectionId: string
  /** `powerdns`, `cloudflare`, `rfc2136`. */
  provider: string
  name: string
  error: string | null
  at: Date
}

/**
 * A connected provider that cannot be read (domain/dns-providers/read-health.ts): the current
 * record before a write, or the read-back after it, failed (an HTTP error, credentials refused, a
 * timeout). Nothing is written without that read, so automated SPF and DMARC changes wait; the
 * previous records stay in place and the jobs retry. One alert per connection; it resolves when a
 * read through the connection succeeds again.
 */
export function dnsReadAlerts(failing: readonly FailingRead[]): AlertCandidate[] {
  return failing.map((read) => ({
    type: 'dns_provider_read_failing' as const,
    subject: read.connectionId,
    severity: 'high' as const,
    title: `The DNS provider connection "${read.name}" cannot be read`,
    details: {
      evidence: {
        connectionId: read.connectionId,
        provider: read.provider,
        name: read.name,
        error: read.error,
        failedAt: read.at.toISOString(),
      },
      remedy:
        'Records are written through this connection only after reading what it holds, so automated SPF and DMARC changes wait; the previous records stay in place and the change is retried. Check that the provider is reachable and that its credentials are still valid and allowed to read the zone: authenticate again (POST /dns-providers/authenticate) if they changed, and see GET /dns-providers. This alert resolves after a successful read through the connection.',
    },
  }))
}

export const DNS_READ_SCOPE: RuleScope = { rulesEvaluated: ['dns_provider_read_failing'] }
