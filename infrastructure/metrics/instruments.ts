import { Registry } from './registry.ts'

// The process's instruments. One registry per process, like a logger: the request plugin, the
// ingest jobs and the webhook jobs record into it without it being threaded through every
// constructor, and with ROLE=all one scrape of /metrics covers the API and the worker alike.
// Values that already live elsewhere (queue depths, the DNS cache's hit counts, memory) are not
// kept here: they are read when scraped (scrape.ts).

export const processRegistry = new Registry()

// Seconds. From 1 ms (a cached read) to 10 s (the slowest report upload we still answer).
export const HTTP_DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

export const httpRequests = processRegistry.counter<'method' | 'route' | 'status'>({
  name: 'http_requests_total',
  help: 'HTTP requests answered, by method, route pattern and status.',
  labelNames: ['method', 'route', 'status'],
})

export const httpDuration = processRegistry.histogram<'method' | 'route'>({
  name: 'http_request_duration_seconds',
  help: 'Time from receiving a request to its response, by method and route pattern.',
  labelNames: ['method', 'route'],
  buckets: HTTP_DURATION_BUCKETS,
})

export const ingestMessages = processRegistry.counter<'outcome'>({
  name: 'ingest_messages_total',
  help: 'Report messages processed: processed (stored something new), duplicate (only reports already stored), quarantined.',
  labelNames: ['outcome'],
})

export const ingestReports = processRegistry.counter<'kind'>({
  name: 'ingest_reports_total',
  help: 'Reports newly stored, by kind (aggregate, forensic, tls-rpt).',
  labelNames: ['kind'],
})

export const ingestRecords = processRegistry.counter({
  name: 'ingest_aggregate_records_total',
  help: 'Aggregate report records newly stored.',
})

export const webhookAttempts = processRegistry.counter<'verdict'>({
  name: 'webhook_attempts_total',
  help: 'Webhook delivery attempts, by verdict: delivered, retry (will be tried again), give_up.',
  labelNames: ['verdict'],
})

export const webhookDeferrals = processRegistry.counter({
  name: 'webhook_deferrals_total',
  help: 'Webhook deliveries put off by the per-account hourly limit.',
})

// Every known label value starts at 0, so a rate is right from the first event.
for (const outcome of ['processed', 'duplicate', 'quarantined']) ingestMessages.init({ outcome })
for (const kind of ['aggregate', 'forensic', 'tls-rpt']) ingestReports.init({ kind })
for (const verdict of ['delivered', 'retry', 'give_up']) webhookAttempts.init({ verdict })

// Any token is a method to Bun; the label keeps the standard ones and folds the rest into one.
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/** Called once per answered request (plugins/logging.ts). `route` is the route pattern, never the path. */
export function recordRequest(verb: string, route: string, status: number, seconds: number): void {
  const method = METHODS.has(verb) ? verb : 'other'
  httpRequests.inc({ method, route, status })
  httpDuration.observe({ method, route }, seconds)
}
