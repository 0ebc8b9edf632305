// bun run bench — every benchmark, one after the other (they would skew each other in parallel on
// two cores), then one JSON and one markdown table of the whole run under bench/results/ (not
// committed). Each bench is its own process, as when run alone; one that fails is recorded and the
// others still run. BENCH_SKIP=ingest,api leaves some out.
import { loadavg } from 'node:os'
import { type BenchResult, resultsDir, writeRun } from './report.ts'

const BENCHES = [
  { name: 'spf', script: 'bench/spf.ts' },
  { name: 'aggregate-parser', script: 'bench/aggregate-parser.ts' },
  { name: 'ingest', script: 'bench/ingest.ts' },
  { name: 'api', script: 'bench/api.ts' },
  { name: 'mixed-load', script: 'bench/mixed-load.ts' },
]
const skip = new Set((process.env.BENCH_SKIP ?? '').split(',').filter((s) => s !== ''))

const startedAt = new Date()
const loadAtStart = loadavg()[0]!
const results: BenchResult[] = []
const failed: { name: string; exitCode: number }[] = []
for (const bench of BENCHES.filter((b) => !skip.has(b.name))) {
  const began = Date.now()
  console.log(`\n== ${bench.name} (${bench.script})`)
  const child = Bun.spawn(['bun', bench.script], {
    cwd: new URL('../', import.meta.url).pathname,
    stdout: 'inherit',
    stderr: 'inherit',
  })
  const exitCode = await child.exited
  const file = Bun.file(`${resultsDir}${bench.name}.json`)
  const result = (await file.exists()) ? ((await file.json()) as BenchResult) : null
  // A results file older than this run's start is a previous run's, not this one's.
  if (exitCode === 0 && result !== null && Date.parse(result.at) >= began) results.push(result)
  else failed.push({ name: bench.name, exitCode })
}

const written = await writeRun(startedAt, loadAtStart, results, failed)
const misses = results.flatMap((r) => r.figures.filter((f) => !f.ok).map((f) => `${r.name}: ${f.metric}`))
console.log(`\nWrote ${written.json}\n  and ${written.markdown}`)
if (misses.length > 0) console.log(`Targets missed:\n  ${misses.join('\n  ')}`)
if (failed.length > 0) console.log(`Failed: ${failed.map((f) => f.name).join(', ')}`)
process.exit(failed.length > 0 ? 1 : 0)
