// bun run bench:spf — SPF evaluation throughput against a real DNS server on loopback, with a cold
// and a warm TTL cache, and beside them a suite-shaped figure: the RFC 7208 suite's checks on its
// zones, in memory (bench/spf-suite.ts). With SPF_BENCH_MAILAUTH=<a mailauth package directory>,
// mailauth's SPF runs the same checks in the same process, and the ratio is printed against the 3x
// target (docs/spf-management.md "Speed of SPF evaluation"). A benchmark, not a test: each figure
// beside its target.

import { checkHost } from '../domain/spf/check-host.ts'
import { withTtlCache } from '../infrastructure/dns/dns-cache.ts'
import { createDnsPacketResolver } from '../infrastructure/dns/dns-packet-resolver.ts'
import { startDnsServer, type Zone } from '../tests/support/dns-server.ts'
import { type Figure, report } from './report.ts'
import {
  evaluateWithDmarcwatch,
  loadMailauth,
  loadSuiteCases,
  mailauthEvaluator,
  measure,
  type Rate,
  warmUp,
} from './spf-suite.ts'

// A realistic set: 40 sending domains whose records pull in 3 to 9 includes through nested
// provider records (like _spf.google.com → _netblocks*.google.com), with ip4/ip6 ranges at the leaves.
const zone: Zone = {}
const PROVIDERS = 12
for (let p = 0; p < PROVIDERS; p++) {
  const leaves = [0, 1].map((l) => `_nb${l}.provider${p}.example`)
  zone[`_spf.provider${p}.example`] = [
    { type: 'TXT', data: `v=spf1 ${leaves.map((l) => `include:${l}`).join(' ')} ~all` },
  ]
  leaves.forEach((leaf, l) => {
    const ranges = Array.from({ length: 6 }, (_, r) => `ip4:10.${p}.${l * 16 + r}.0/24`).join(' ')
    zone[leaf] = [{ type: 'TXT', data: `v=spf1 ${ranges} ip6:2001:db8:${p}:${l}::/64 ~all` }]
  })
  // Single-level providers.
  zone[`spf.single${p}.example`] = [{ type: 'TXT', data: `v=spf1 ip4:172.16.${p}.0/24 -all` }]
}
const DOMAINS = 40
const domains: string[] = []
for (let d = 0; d < DOMAINS; d++) {
  const name = `sender${d}.example`
  // 1-2 nested providers (3 includes each: the provider record and its two leaves) plus 0-3 single
  // providers: 3 to 9 include terms evaluated in all, and the mx term.
  const nested = d % 2 === 0 ? [d % PROVIDERS] : [d % PROVIDERS, (d + 5) % PROVIDERS]
  const singles = Array.from({ length: d % 4 }, (_, s) => `include:spf.single${(d + s) % PROVIDERS}.example`)
  const terms = [...nested.map((p) => `include:_spf.provider${p}.example`), ...singles]
  zone[name] = [{ type: 'TXT', data: `v=spf1 mx ${terms.join(' ')} -all` }]
  zone[`mx.${name}`] = [{ type: 'A', data: `192.0.2.${d}` }]
  zone[name].push({ type: 'MX', data: { preference: 10, exchange: `mx.${name}` } })
  domains.push(name)
}

const server = await startDnsServer(zone)
const upstream = createDnsPacketResolver({
  servers: [{ host: '127.0.0.1', port: server.port }],
  timeoutMs: 2000,
})
// A client address no record lists: every branch is evaluated (the worst case, and the common one
// for spoofed mail).
const input = (domain: string) => ({
  ip: '198.51.100.7',
  domain,
  sender: `bounce@${domain}`,
  helo: `mail.${domain}`,
  now: new Date(),
})

let includesMin = Number.POSITIVE_INFINITY
let includesMax = 0
async function evaluate(dns: Parameters<typeof checkHost>[0]['dns'], domain: string) {
  const result = await checkHost({ dns }, input(domain))
  if (result.result !== 'fail')
    throw new Error(`${domain}: expected fail, got ${result.result} (${result.reason})`)
  includesMin = Math.min(includesMin, result.lookups - 1)
  includesMax = Math.max(includesMax, result.lookups - 1)
}

// Cold: a new cache for every evaluation, so every lookup goes to the server.
const COLD_RUNS = 400
let started = performance.now()
const queriesBeforeCold = server.queries.length
for (let i = 0; i < COLD_RUNS; i++) {
  await evaluate(withTtlCache(upstream, { now: () => Date.now() }), domains[i % DOMAINS]!)
}
const coldSeconds = (performance.now() - started) / 1000
const coldQueries = server.queries.length - queriesBeforeCold

// Warm: one shared cache, filled by one pass; then every evaluation is served from it.
const cache = withTtlCache(upstream, { now: () => Date.now() })
for (const domain of domains) await evaluate(cache, domain)
const WARM_RUNS = 20_000
const queriesBeforeWarm = server.queries.length
started = performance.now()
for (let i = 0; i < WARM_RUNS; i++) await evaluate(cache, domains[i % DOMAINS]!)
const warmSeconds = (performance.now() - started) / 1000
const warmQueries = server.queries.length - queriesBeforeWarm
await server.stop()

const coldRate = COLD_RUNS / coldSeconds
const warmRate = WARM_RUNS / warmSeconds

// Suite-shaped: after a warm-up of 100 rounds each (20,300 evaluations), alternating passes
// (dmarcwatch, then mailauth when given), so both see the same machine load; medians are reported, per second of CPU time used by this process (on a shared
// machine wall time mostly measures the other processes) and, beside it, of wall time.
const cases = await loadSuiteCases()
const mailauthDir = process.env.SPF_BENCH_MAILAUTH
const mailauth = await loadMailauth(mailauthDir)
if (mailauthDir && mailauth === null)
  throw new Error(`SPF_BENCH_MAILAUTH=${mailauthDir}: no lib/spf/index.js there`)
const mailauthCheck = mailauth === null ? null : mailauthEvaluator(mailauth)
const SUITE_ROUNDS = 40
const PASSES = 9
await warmUp(cases, evaluateWithDmarcwatch, 100)
if (mailauthCheck !== null) await warmUp(cases, mailauthCheck, 100)
const ours: Rate[] = []
const theirs: Rate[] = []
for (let pass = 0; pass < PASSES; pass++) {
  ours.push(await measure(cases, evaluateWithDmarcwatch, SUITE_ROUNDS))
  if (mailauthCheck !== null) theirs.push(await measure(cases, mailauthCheck, SUITE_ROUNDS))
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const rates = (list: Rate[]) =>
  `${median(list.map((r) => r.cpu)).toFixed(0)} (wall ${median(list.map((r) => r.wall)).toFixed(0)})`
const comparison: Figure[] = []
if (mailauthCheck !== null) {
  const ratios = ours.map((r, i) => r.cpu / theirs[i]!.cpu)
  const ratio = median(ratios)
  const wallRatio = median(ours.map((r, i) => r.wall / theirs[i]!.wall))
  const version = ((await Bun.file(`${mailauthDir}/package.json`).json()) as { version?: string }).version
  comparison.push(
    {
      metric: `suite-shaped: mailauth ${version ?? '?'} evaluations/s CPU`,
      value: rates(theirs),
      target: 'reported (same process, same zones)',
      ok: true,
    },
    {
      metric: 'suite-shaped: dmarcwatch / mailauth (CPU, median of 9 passes)',
      value: `${ratio.toFixed(2)}x (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}; wall ${wallRatio.toFixed(2)}x)`,
      target: '>= 3x',
      ok: ratio >= 3,
    },
  )
}

await report('spf', [
  {
    metric: 'include terms per evaluation',
    value: `${includesMin}-${includesMax}`,
    target: 'realistic: 3-9 nested includes',
    ok: includesMin >= 3 && includesMax <= 9,
  },
  { metric: 'cold cache: evaluations/s', value: coldRate.toFixed(0), target: 'reported', ok: true },
  {
    metric: 'cold cache: DNS queries per evaluation',
    value: (coldQueries / COLD_RUNS).toFixed(1),
    target: 'every lookup goes to the server',
    ok: coldQueries > 0,
  },
  {
    metric: 'warm cache: evaluations/s',
    value: warmRate.toFixed(0),
    target: 'much faster than cold',
    ok: warmRate > coldRate * 5,
  },
  {
    metric: `suite-shaped: evaluations/s CPU (${cases.length} RFC 7208 suite checks, in memory)`,
    value: rates(ours),
    target: 'reported beside warm; compare with mailauth',
    ok: true,
  },
  ...comparison,
  {
    metric: 'warm cache: DNS queries',
    value: String(warmQueries),
    target: '0 (no network I/O)',
    ok: warmQueries === 0,
  },
])
