import type { PgBoss } from 'pg-boss'
import type { DnsCacheStats } from '../dns/dns-cache.ts'
import { processRegistry } from './instruments.ts'
import { Registry } from './registry.ts'

// One scrape: the process's counters and histograms, then values read at this moment from where
// they already live (pg-boss's queue table, the DNS cache's own counts, the process). Reading them
// here keeps them off every hot path and always current.

export interface MetricsSources {
  /** Null where the process has no queue (some tests). */
  boss: Pick<PgBoss, 'getQueues'> | null
  /** The process's shared DNS cache (posture checks, SPF, MTA-STS). */
  dns: { stats(): DnsCacheStats } | null
}

// Event-loop lag: a timer asks to run every 500 ms and we record how late it ran. Started with the
// first metrics endpoint, once per process; unref'd so it never keeps a process alive.
const lag = processRegistry.histogram({
  name: 'process_event_loop_lag_seconds',
  help: 'How late a 500 ms timer fired: time the event loop was busy with other work.',
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
})
let sampling = false
export function startLagSampler(intervalMs = 500): void {
  if (sampling) return
  sampling = true
  let expected = performance.now() + intervalMs
  setInterval(() => {
    const at = performance.now()
    lag.observe(undefined, Math.max(0, at - expected) / 1000)
    expected = at + intervalMs
  }, intervalMs).unref()
}

const startedAt = Date.now() / 1000 - process.uptime()

/** pg-boss's per-queue counts; they are as fresh as pg-boss's last monitor pass (every 60 s). */
async function queueDepths(registry: Registry, boss: MetricsSources['boss']): Promise<void> {
  if (boss === null) return
  const up = registry.gauge({
    name: 'jobs_queue_stats_up',
    help: '1 if the queue counts could be read from the database at this scrape, else 0.',
  })
  const depth = registry.gauge<'queue' | 'state'>({
    name: 'jobs_queue_depth',
    help: "Jobs per queue and state (ready, deferred, blocked, active, failed), as of pg-boss's last monitor pass.",
    labelNames: ['queue', 'state'],
  })
  const oldest = registry.gauge<'queue'>({
    name: 'jobs_queue_oldest_ready_seconds',
    help: 'How long the oldest job ready to run had waited, as of the same pass.',
    labelNames: ['queue'],
  })
  try {
    for (const q of await boss.getQueues()) {
      depth.set({ queue: q.name, state: 'ready' }, q.readyCount)
      depth.set({ queue: q.name, state: 'deferred' }, q.deferredCount)
      depth.set({ queue: q.name, state: 'blocked' }, q.blockedCount)
      depth.set({ queue: q.name, state: 'active' }, q.activeCount)
      depth.set({ queue: q.name, state: 'failed' }, q.failedCount)
      oldest.set({ queue: q.name }, q.readyOldestSeconds ?? 0)
    }
    up.set(undefined, 1)
  } catch {
    // A scrape must answer even while the database is away; the gauge says the counts are missing.
    up.set(undefined, 0)
  }
}

function dnsCache(registry: Registry, dns: MetricsSources['dns']): void {
  if (dns === null) return
  const stats = dns.stats()
  const requests = registry.counter<'result'>({
    name: 'dns_cache_requests_total',
    help: 'DNS questions asked of the shared cache: hit (answered from it or joined a query in flight), miss.',
    labelNames: ['result'],
  })
  requests.inc({ result: 'hit' }, stats.hits)
  requests.inc({ result: 'miss' }, stats.misses)
  registry
    .gauge({ name: 'dns_cache_entries', help: 'Answers held in the DNS cache.' })
    .set(undefined, stats.size)
}

function processFigures(registry: Registry): void {
  const memory = process.memoryUsage()
  const cpu = process.cpuUsage()
  registry
    .gauge({ name: 'process_resident_memory_bytes', help: 'Resident memory size in bytes.' })
    .set(undefined, memory.rss)
  registry
    .gauge({ name: 'process_heap_used_bytes', help: 'JavaScript heap in use, in bytes.' })
    .set(undefined, memory.heapUsed)
  registry
    .counter({ name: 'process_cpu_seconds_total', help: 'User and system CPU time spent, in seconds.' })
    .inc(undefined, (cpu.user + cpu.system) / 1e6)
  registry
    .gauge({ name: 'process_start_time_seconds', help: 'Start time of the process since the Unix epoch.' })
    .set(undefined, Math.round(startedAt))
}

/** The whole exposition text for one scrape. */
export async function scrapeMetrics(sources: MetricsSources): Promise<string> {
  const now = new Registry()
  await queueDepths(now, sources.boss)
  dnsCache(now, sources.dns)
  processFigures(now)
  return processRegistry.render() + now.render()
}
