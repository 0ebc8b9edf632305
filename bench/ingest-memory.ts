// Memory of the service under large mail (issue #16): a real service process (API and worker,
// ROLE=all) on the benchmark's database, fed ~60 MB messages over HTTP; its peak RSS growth is the
// kernel's high-water mark (VmHWM, reset through /proc/<pid>/clear_refs) over its RSS before.
import { sql } from 'drizzle-orm'
import { type Database, rowsOf } from '../infrastructure/db/database.ts'
import { startService } from '../tests/support/processes.ts'
import { type BigMessage, bigMessage } from './big-messages.ts'
import { processCpuSeconds } from './process-stats.ts'
import type { Figure } from './report.ts'

const SECRET = 'bench-intake-secret-0123456789abcdef'
const MB = 1e6

async function status(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const text = await Bun.file(`/proc/${pid}/status`).text()
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)
  if (match === null) throw new Error(`no ${field} for process ${pid}`)
  return Number(match[1]) * 1024
}

export async function ingestMemoryFigures(input: {
  url: string
  database: Database
  recipient: string
  domains: string[]
}): Promise<Figure[]> {
  const service = await startService({
    DATABASE_URL: input.url,
    SECRET_KEY: '11'.repeat(32),
    INGEST_DOMAIN: 'in.bench.test',
    INGEST_SECRET: SECRET,
    RATE_LIMIT_PUBLIC_PER_MINUTE: '10000000',
    LOG_LEVEL: 'info',
  })
  const pid = service.child.pid
  const post = async (bytes: Uint8Array) => {
    const response = await fetch(`${service.url}/api/v1/ingest/messages?recipient=${input.recipient}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'message/rfc822' },
      body: bytes as Uint8Array<ArrayBuffer>,
    })
    const body = (await response.json()) as { data?: { id: string } }
    if (response.status !== 202 || !body.data) {
      const errors = service.lines.filter((line) => /error|500/.test(line)).slice(-3)
      throw new Error(`intake answered ${response.status}: ${errors.join('\n')}`)
    }
    return body.data.id
  }
  const settled = async (ids: string[]) => {
    const list = sql.join(
      ids.map((id) => sql`${id}::uuid`),
      sql`, `,
    )
    for (;;) {
      const rows = rowsOf<{ status: string; code: string | null }>(
        await input.database.db.execute(
          sql`select status, quarantine_code as code from ingest_messages where id in (${list})`,
        ),
      )
      if (rows.every((row) => row.status !== 'pending')) return rows
      await Bun.sleep(100)
    }
  }
  /** Sends the messages at once and waits until the worker is done with them: peak growth in bytes. */
  const measure = async (messages: BigMessage[]) => {
    Bun.gc(true)
    await Bun.sleep(2000)
    const before = await status(pid, 'VmRSS')
    await Bun.write(`/proc/${pid}/clear_refs`, '5')
    const cpu = await processCpuSeconds(pid)
    const started = performance.now()
    const ids = await Promise.all(messages.map((message) => post(message.bytes)))
    const accepted = (performance.now() - started) / 1000
    const intakeGrowth = (await status(pid, 'VmHWM')) - before
    if (process.env.BENCH_DEBUG)
      console.log(
        'accepted after',
        accepted.toFixed(1),
        's; growth so far',
        Math.round(intakeGrowth / MB),
        'MB',
      )
    const rows = await settled(ids)
    const seconds = (performance.now() - started) / 1000
    const spent = await processCpuSeconds(pid)
    const cpuSeconds = cpu === null || spent === null ? null : spent - cpu
    return {
      growth: (await status(pid, 'VmHWM')) - before,
      before,
      rows,
      seconds,
      cpuSeconds,
      children: await reportProcessRuns(ids),
    }
  }
  /**
   * The report processes that digested `ids` (a ROLE=all service on PostgreSQL hands messages of
   * 1 MiB or more to one: docs/ingestion.md), from the lines the service logs when each exits: the
   * kernel's peak RSS and CPU of each. Their memory is not the service's: reported beside it.
   */
  const reportProcessRuns = async (ids: string[]) => {
    const wanted = new Set(ids)
    const deadline = Date.now() + 10_000
    for (;;) {
      const runs = service.lines
        .filter((line) => line.includes('"message digested by a report process"'))
        .map(
          (line) =>
            JSON.parse(line) as {
              message_id: string
              peak_rss_bytes: number
              rss_at_task_bytes: number
              cpu_ms: number
            },
        )
        .filter((run) => wanted.has(run.message_id))
      if (runs.length === ids.length || Date.now() > deadline) return runs
      await Bun.sleep(100)
    }
  }
  // Each process's peak, and in brackets its growth over its RSS when the task began.
  const childNote = (runs: { peak_rss_bytes: number; rss_at_task_bytes: number; cpu_ms: number }[]) =>
    runs.length === 0
      ? ''
      : `; ${runs.length} report process${runs.length > 1 ? 'es' : ''}, peak ${runs
          .map(
            (run) =>
              `${Math.round(run.peak_rss_bytes / MB)} (+${Math.round((run.peak_rss_bytes - run.rss_at_task_bytes) / MB)})`,
          )
          .join(', ')} MB, ${(runs.reduce((a, run) => a + run.cpu_ms, 0) / 1000).toFixed(1)} s CPU`
  try {
    // Warm: the code paths are loaded and compiled before anything is measured.
    const warm = bigMessage({
      to: input.recipient,
      domain: input.domains[0]!,
      reportId: 'warm',
      kind: 'gzip',
      records: 100,
      seed: 3,
      total: 2 * MB,
    })
    await settled([await post(warm.bytes)])

    const one = [
      bigMessage({
        to: input.recipient,
        domain: input.domains[1]!,
        reportId: 'big-one',
        kind: 'gzip',
        records: 100_000,
        seed: 11,
      }),
    ]
    const single = await measure(one)

    const kinds: [BigMessage['kind'], number, number][] = [
      ['gzip', 100_000, 1],
      ['gzip', 40_000, 3],
      ['zip', 100_000, 1],
      ['xml', 80_000, 1],
      ['forwarded', 60_000, 2],
      ['gzip', 20_000, 6],
      ['zip', 20_000, 2],
      ['none', 0, 3],
    ]
    const eight = kinds.map(([kind, records, pieces], i) =>
      bigMessage({
        to: input.recipient,
        domain: input.domains[2 + i]!,
        reportId: `big-eight-${i}`,
        kind,
        records,
        pieces,
        seed: 100 + i,
      }),
    )
    const sizes = eight.map((message) => message.bytes.byteLength)
    const many = await measure(eight)
    if (process.env.BENCH_DEBUG)
      for (const line of service.lines.filter((l) => /quarantine|failed/.test(l)))
        console.log(line.slice(0, 400))
    const stored = many.rows.filter((row) => row.status === 'processed').length
    const quarantined = many.rows.filter((row) => row.status === 'quarantined').length
    return [
      {
        metric: `one ${(one[0]!.bytes.byteLength / MB).toFixed(0)} MB message over HTTP: peak RSS growth of the service (VmHWM; RSS before ${Math.round(single.before / MB)} MB; ${single.seconds.toFixed(1)} s, ${single.cpuSeconds?.toFixed(1)} s CPU${childNote(single.children)})`,
        value: `${Math.round(single.growth / MB)} MB`,
        target: '≤ 150 MB',
        ok: single.growth <= 150 * MB && single.rows[0]?.status === 'processed',
      },
      {
        metric: `eight ${(Math.min(...sizes) / MB).toFixed(0)}-${(Math.max(...sizes) / MB).toFixed(0)} MB messages at once: peak RSS growth (${many.seconds.toFixed(1)} s, ${many.cpuSeconds?.toFixed(1)} s CPU${childNote(many.children)})`,
        value: `${Math.round(many.growth / MB)} MB`,
        target: '≤ 400 MB',
        ok: many.growth <= 400 * MB,
      },
      {
        // The one without a report is quarantined (no_report_found); the others are stored.
        metric: 'eight at once: stored / quarantined',
        value: `${stored} / ${quarantined}`,
        target: '7 / 1, all 8 settled',
        ok: stored === 7 && quarantined === 1,
      },
    ]
  } finally {
    service.child.kill('SIGTERM')
    await service.child.exited
  }
}
