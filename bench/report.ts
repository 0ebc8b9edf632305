import { mkdirSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'

export interface Figure {
  metric: string
  value: string
  target: string
  ok: boolean
}

export interface BenchResult {
  name: string
  at: string
  figures: Figure[]
}

export const resultsDir = new URL('./results/', import.meta.url).pathname

/** Prints the figures beside their targets and writes them to bench/results/<name>.json. */
export async function report(name: string, figures: Figure[]): Promise<void> {
  const width = Math.max(...figures.map((f) => f.metric.length))
  const valueWidth = Math.max(...figures.map((f) => f.value.length))
  console.log(`\n${name} (${new Date().toISOString()}, Bun ${Bun.version})`)
  for (const f of figures) {
    console.log(
      `  ${f.ok ? 'ok  ' : 'MISS'} ${f.metric.padEnd(width)}  ${f.value.padStart(valueWidth)}   target: ${f.target}`,
    )
  }
  mkdirSync(resultsDir, { recursive: true })
  const result: BenchResult = { name, at: new Date().toISOString(), figures }
  await Bun.write(`${resultsDir}${name}.json`, JSON.stringify(result, null, 2))
}

const cell = (text: string) => text.replace(/\|/g, '\\|')

/**
 * `bun run bench`'s record of one whole run: bench/results/<timestamp>.json and .md, every figure
 * beside its target, with the machine it ran on (figures only compare within one machine).
 */
export async function writeRun(
  startedAt: Date,
  /** The 1-minute load average when the run began: a busy machine explains slow figures. */
  loadAtStart: number,
  results: BenchResult[],
  failed: { name: string; exitCode: number }[],
): Promise<{ json: string; markdown: string }> {
  const machine = {
    bun: Bun.version,
    cpus: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    platform: `${process.platform} ${process.arch}`,
    load_at_start: Math.round(loadAtStart * 100) / 100,
    load_at_end: Math.round(loadavg()[0]! * 100) / 100,
  }
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-')
  mkdirSync(resultsDir, { recursive: true })
  const json = `${resultsDir}${stamp}.json`
  await Bun.write(json, JSON.stringify({ at: startedAt.toISOString(), machine, results, failed }, null, 2))

  const lines = [
    `# Benchmarks, ${startedAt.toISOString()}`,
    '',
    `Bun ${machine.bun}, ${machine.cpus} × ${machine.cpu}, ${machine.platform}; load average ${machine.load_at_start} at the start, ${machine.load_at_end} at the end (other work on the machine slows every figure).`,
    '',
  ]
  for (const result of results) {
    lines.push(`## ${result.name}`, '', '| | figure | measured | target |', '| --- | --- | ---: | --- |')
    for (const f of result.figures)
      lines.push(`| ${f.ok ? 'ok' : '**MISS**'} | ${cell(f.metric)} | ${cell(f.value)} | ${cell(f.target)} |`)
    lines.push('')
  }
  for (const f of failed)
    lines.push(`## ${f.name}`, '', `**Failed** (exit code ${f.exitCode}); see its output.`, '')
  const markdown = `${resultsDir}${stamp}.md`
  await Bun.write(markdown, `${lines.join('\n')}`)
  return { json, markdown }
}
