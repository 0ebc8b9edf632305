// Small reports end to end (issue #20, part 2): real service processes on the benchmark's database,
// fed typical reports (1-20 records, gzipped, one per email) over HTTP intake by 8 clients at once;
// the figure is reports per second from the first POST until the account's overview counts them
// all. Two shapes: one ROLE=all process, and one ROLE=api with two ROLE=worker processes. The
// machine's load average is recorded beside each figure (the machine is shared).
import { loadavg } from 'node:os'
import { type ServiceProcess, startService } from '../tests/support/processes.ts'
import { cpuSince } from './process-stats.ts'
import type { Figure } from './report.ts'
import { aggregateXml, reportEmail } from './report-generator.ts'
import { serviceEnv } from './service-env.ts'

const SECRET = 'bench-intake-secret-0123456789abcdef'
const CLIENTS = 8

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')

export async function smallReportFigures(input: {
  url: string
  recipient: string
  domains: string[]
  token: string
}): Promise<Figure[]> {
  const count = Number(process.env.BENCH_SMALL_REPORTS ?? 2000)
  const env = {
    DATABASE_URL: input.url,
    SECRET_KEY: '11'.repeat(32),
    INGEST_DOMAIN: 'in.bench.test',
    INGEST_SECRET: SECRET,
    RATE_LIMIT_PUBLIC_PER_MINUTE: '10000000',
    RATE_LIMIT_API_PER_MINUTE: '10000000',
    LOG_LEVEL: 'warn',
    ...serviceEnv(),
  }
  const emails = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) => {
      const domain = input.domains[i % input.domains.length]!
      const reportId = `${prefix}-${i}`
      const xml = aggregateXml({ domain, reportId, records: 1 + (i % 20), seed: i + 7 })
      return reportEmail({ to: input.recipient, xml, reportId, domain })
    })
  const figures: Figure[] = []
  const shapes: { name: string; target: number; roles: string[] }[] = [
    { name: 'one ROLE=all process', target: 200, roles: ['all'] },
    { name: 'ROLE=api + two ROLE=worker processes', target: 400, roles: ['api', 'worker', 'worker'] },
  ]
  const which = process.env.BENCH_SMALL_SHAPES?.split(',')
  for (const [index, shape] of shapes.entries()) {
    if (which !== undefined && !which.includes(String(index + 1))) continue
    // LOG_LEVEL=warn and the line waited for is info: start at info, the service logs little after.
    const processes: ServiceProcess[] = []
    try {
      for (const role of shape.roles)
        processes.push(await startService({ ...env, ROLE: role, LOG_LEVEL: 'info' }))
      const api = processes[0]!
      const reports = async () => {
        const response = await fetch(`${api.url}/api/v1/dmarc-reports/overview?days=30`, {
          headers: { authorization: `Bearer ${input.token}` },
        })
        const body = (await response.json()) as { data?: { totals?: { reports?: number } } }
        const n = body.data?.totals?.reports
        if (response.status !== 200 || n === undefined) throw new Error(`overview: ${response.status}`)
        return n
      }
      const run = async (batch: Uint8Array[]) => {
        const before = await reports()
        const cpu = await cpuSince(Object.fromEntries(processes.map((p, i) => [`p${i}`, p.child.pid])))
        const started = performance.now()
        let next = 0
        await Promise.all(
          Array.from({ length: CLIENTS }, async () => {
            while (next < batch.length) {
              const email = batch[next++]!
              const response = await fetch(`${api.url}/api/v1/ingest/messages?recipient=${input.recipient}`, {
                method: 'POST',
                headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'message/rfc822' },
                body: email as Uint8Array<ArrayBuffer>,
              })
              await response.arrayBuffer()
              if (response.status !== 202) throw new Error(`intake answered ${response.status}`)
            }
          }),
        )
        const accepted = (performance.now() - started) / 1000
        while ((await reports()) < before + batch.length) await Bun.sleep(100)
        const seconds = (performance.now() - started) / 1000
        const spent = await cpu.stop()
        const perReport = processes.map((_, i) => spent.processes[`p${i}`])
        const jitPerReport = processes.map((_, i) => spent.jit[`p${i}`])
        return { seconds, accepted, machine: spent.machine, perReport, jitPerReport }
      }
      // Warm: code compiled and connections open before anything is measured.
      await run(emails(`warm-${index}`, 100))
      const uptimeBefore = load()
      const measured = await run(emails(`small-${index}`, count))
      const rate = count / measured.seconds
      const busy =
        measured.machine === null
          ? ''
          : `, machine ${((measured.machine / measured.seconds / navigator.hardwareConcurrency) * 100).toFixed(0)}% busy`
      const perReport = (all: (number | null | undefined)[]) =>
        all.map((seconds) => (seconds == null ? '?' : ((seconds / count) * 1000).toFixed(2))).join(' / ')
      const cpuPerReport = perReport(measured.perReport)
      figures.push({
        metric: `${count} small reports, ${shape.name}: CPU per report (${shape.roles.join(' / ')}; of which the JIT compiler threads ${perReport(measured.jitPerReport)} ms)`,
        value: `${cpuPerReport} ms`,
        target: 'reported',
        ok: true,
      })
      figures.push({
        metric: `${count} small reports, ${shape.name}: HTTP intake (${CLIENTS} clients) → overview shows all (load average ${uptimeBefore} before, ${load()} after${busy}; intake alone ${(count / measured.accepted).toFixed(0)} /s)`,
        value: `${rate.toFixed(0)} /s`,
        target: `≥ ${shape.target} reports/s`,
        ok: rate >= shape.target,
      })
    } finally {
      for (const p of processes) p.child.kill('SIGTERM')
      for (const p of processes) await p.child.exited
    }
  }
  return figures
}
