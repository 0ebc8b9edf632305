import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import type { ImportedReport, ImportOutcome } from '../../domain/ingest/import-outcome.ts'
import type { Failure } from '../../domain/shared/result.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import { jsonLogger } from '../../infrastructure/logging/json-logger.ts'
import { fileKind } from '../../infrastructure/mail/file-kind.ts'
import { splitMbox } from '../../infrastructure/mail/mbox.ts'
import { SNIFF_BYTES } from '../../infrastructure/mail/sniff.ts'
import { startBoss } from '../../infrastructure/queue/pg-boss.ts'
import { pgAccountStore } from '../../infrastructure/repositories/pg-account-store.ts'
import { reportImport, resolvers } from '../compose.ts'
import type { Config } from '../config.ts'
import type { IngestNow } from '../jobs/ingest-now.ts'
import { createQueues } from '../jobs/queues.ts'
import { type Progress, progress } from './progress.ts'

// `bun run cli import --email E PATH...`: report files and folders (a mailbox export, another
// tool's archive) into the account of E. Like the other commands it talks to the database directly
// (DATABASE_URL, or DATA_DIR's embedded database, through the running service's socket if there is
// one), and every file goes through the intake and processing code of POST /ingest/reports, one
// at a time, so each gets its outcome (docs/ingestion.md).

export const IMPORT_USAGE = `  import --email E PATH...                           import report files and folders (recursively):
                                                     .xml/.gz/.zip/.json reports, .eml emails, mbox files`

export class ImportUsageError extends Error {}

type Status = 'stored' | 'duplicate' | 'quarantined' | 'pending' | 'skipped' | 'refused' | 'failed'

interface Item {
  status: Status
  label: string
  detail: string
  /** The quarantine reason's code. */
  code?: string
}

interface Found {
  path: string
  size: number
}

/** Files under the paths, in name order; entries starting with "." inside folders are left out. */
async function collect(paths: string[], out: Found[], missing: Item[]): Promise<void> {
  for (const path of paths) {
    let info: Awaited<ReturnType<typeof stat>>
    try {
      info = await stat(path)
    } catch (error) {
      missing.push({
        status: 'failed',
        label: path,
        detail: `cannot read: ${(error as NodeJS.ErrnoException).code ?? error}`,
      })
      continue
    }
    if (info.isDirectory()) {
      const entries = (await readdir(path)).filter((name) => !name.startsWith('.')).sort()
      await collect(
        entries.map((name) => join(path, name)),
        out,
        missing,
      )
    } else if (info.isFile()) out.push({ path, size: info.size })
  }
}

function describeReport(report: ImportedReport): string {
  if (report.status === 'quarantined') return `${report.code}: ${report.message}`
  const what = [report.kind, report.domain ?? '?']
  if (report.reporter) what.push(`from ${report.reporter}`)
  if (report.reportId) what.push(`report ${report.reportId}`)
  if (report.records !== null) what.push(`${report.records} ${report.records === 1 ? 'record' : 'records'}`)
  return what.join(' ')
}

function itemOf(label: string, outcome: ImportOutcome): Item {
  if (outcome.status === 'pending')
    return { status: 'pending', label, detail: 'accepted; the queue will process it (storage was busy)' }
  if (outcome.status === 'quarantined') {
    const reason = outcome.quarantine!
    return { status: 'quarantined', label, detail: `${reason.code}: ${reason.message}`, code: reason.code }
  }
  return { status: outcome.status, label, detail: outcome.reports.map(describeReport).join('; ') }
}

function failureText(failure: Failure, maxBytes: number): string {
  if (failure.code === 'payload_too_large') return `larger than INGEST_MAX_MESSAGE_BYTES (${maxBytes} bytes)`
  if (failure.code === 'validation_failed') return failure.message
  return failure.code
}

async function importOne(
  importer: IngestNow,
  accountId: string,
  label: string,
  raw: Uint8Array,
  maxBytes: number,
): Promise<Item> {
  const result = await importer({ raw, recipient: null, source: 'cli', accountId })
  if (!result.ok) return { status: 'refused', label, detail: failureText(result.failure, maxBytes) }
  return itemOf(label, result.value)
}

async function importFile(
  context: { importer: IngestNow; accountId: string; maxBytes: number; bar: Progress },
  file: Found,
  report: (item: Item) => void,
): Promise<void> {
  const { importer, accountId, maxBytes } = context
  const head = new Uint8Array(await Bun.file(file.path).slice(0, SNIFF_BYTES).arrayBuffer())
  if (head.byteLength === 0) return report({ status: 'skipped', label: file.path, detail: 'empty file' })
  const kind = fileKind(head)
  if (kind === null)
    return report({ status: 'skipped', label: file.path, detail: 'not a report file, an email or an mbox' })
  if (kind === 'mbox') {
    let n = 0
    for await (const message of splitMbox(Bun.file(file.path).stream(), maxBytes)) {
      const label = `${file.path} #${++n}`
      if (!message.ok) {
        report({
          status: 'refused',
          label,
          detail: failureText({ code: 'payload_too_large', limit: maxBytes }, maxBytes),
        })
      } else if (message.raw.byteLength === 0) {
        report({ status: 'skipped', label, detail: 'empty message' })
      } else {
        report(await importOne(importer, accountId, label, message.raw, maxBytes))
      }
    }
    if (n === 0) report({ status: 'skipped', label: file.path, detail: 'an mbox without messages' })
    return
  }
  if (file.size > maxBytes)
    return report({
      status: 'refused',
      label: file.path,
      detail: failureText({ code: 'payload_too_large', limit: maxBytes }, maxBytes),
    })
  const raw = new Uint8Array(await Bun.file(file.path).arrayBuffer())
  report(await importOne(importer, accountId, file.path, raw, maxBytes))
}

const ORDER: Status[] = ['stored', 'duplicate', 'quarantined', 'pending', 'skipped', 'refused', 'failed']

export function summary(files: number, items: Item[]): string {
  const counts = new Map<Status, number>()
  const reasons = new Map<string, number>()
  for (const item of items) {
    counts.set(item.status, (counts.get(item.status) ?? 0) + 1)
    if (item.code !== undefined) reasons.set(item.code, (reasons.get(item.code) ?? 0) + 1)
  }
  const parts = ORDER.filter((s) => ['stored', 'duplicate', 'quarantined'].includes(s) || counts.has(s)).map(
    (s) => `${counts.get(s) ?? 0} ${s}`,
  )
  const lines = [
    `${files} ${files === 1 ? 'file' : 'files'}, ${items.length} ${items.length === 1 ? 'item' : 'items'}: ${parts.join(', ')}`,
  ]
  if (reasons.size > 0) {
    const byCount = [...reasons].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    lines.push(`quarantined: ${byCount.map(([code, n]) => `${code} (${n})`).join(', ')}`)
    lines.push('Quarantined items wait in /reports/quarantine (GET /api/v1/ingest/quarantine) for a retry.')
  }
  return lines.join('\n')
}

export async function runImport(
  args: string[],
  runtime: { config: Config; database: Database },
): Promise<string> {
  const { values, positionals } = parseArgs({
    args,
    options: { email: { type: 'string' } },
    allowPositionals: true,
    strict: true,
  })
  if (!values.email) throw new ImportUsageError(`--email is required\nusage: bun run cli\n${IMPORT_USAGE}`)
  if (positionals.length === 0)
    throw new ImportUsageError(`give at least one file or folder\nusage: bun run cli\n${IMPORT_USAGE}`)
  const { config, database } = runtime
  const member = await pgAccountStore(database.db).findMembershipByEmail(values.email)
  if (member === null) throw new ImportUsageError('no such user')

  const files: Found[] = []
  const items: Item[] = []
  await collect(positionals, files, items)
  const total = files.reduce((sum, f) => sum + f.size, 0)
  const bar = progress(process.stdout, total)
  const report = (item: Item) => {
    items.push(item)
    bar.line(`${item.status.padEnd(12)}${item.label}  ${item.detail}`)
  }
  for (const item of items) bar.line(`${item.status.padEnd(12)}${item.label}  ${item.detail}`)

  const boss = await startBoss(database, { background: false })
  try {
    await createQueues(boss)
    const now = () => new Date()
    // Quarantine reasons are in the lines; the job code's own log lines would only repeat them.
    const logger = jsonLogger('error', (line) => process.stderr.write(line))
    const importer = reportImport({ config, database, boss, logger, now, ...resolvers(config, now) })
    const context = { importer, accountId: member.accountId, maxBytes: config.ingestMaxMessageBytes, bar }
    let done = 0
    for (const file of files) {
      bar.update(done, file.path)
      try {
        await importFile(context, file, report)
      } catch (error) {
        // A file that vanished or cannot be read; database trouble stops the import.
        const code = (error as NodeJS.ErrnoException)?.code
        if (typeof code !== 'string' || !code.startsWith('E')) throw error
        report({ status: 'failed', label: file.path, detail: `cannot read: ${code}` })
      }
      done += file.size
    }
    bar.finish()
  } finally {
    bar.finish()
    await boss.stop({ graceful: false })
  }
  return summary(files.length, items)
}
