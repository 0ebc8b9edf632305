import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { Database } from '../../infrastructure/db/database.ts'
import { jsonLogger } from '../../infrastructure/logging/json-logger.ts'
import { createQueues } from '../../infrastructure/queue/catalogue.ts'
import { startBoss } from '../../infrastructure/queue/pg-boss.ts'
import { resolvers } from '../compose/dns.ts'
import { intake, reportImport } from '../compose/ingest.ts'
import { stores } from '../compose.ts'
import type { Config } from '../config.ts'
import { countItems, type ImportContext, type ImportItem, importBlob } from '../wiring/import-items.ts'
import { CliError, CliUsageError, noAccountWith } from './errors.ts'
import { parseOptions } from './options.ts'
import { progress } from './progress.ts'

// `bun run cli import --email E PATH...`: report files and folders (a mailbox export, another
// tool's archive) into the account of E. Like the other commands it talks to the database directly
// (DATABASE_URL, or DATA_DIR's embedded database, through the running service's socket if there is
// one), and every file goes through the intake and processing code of POST /ingest/reports, one
// at a time, so each gets its outcome (docs/ingestion.md).

export const IMPORT_USAGE = `  import --email E PATH...                           import report files and folders (recursively):
                                                     .xml/.gz/.zip/.json reports, .eml emails, mbox files`

interface Found {
  path: string
  size: number
}

/**
 * Files under the paths, in name order; entries starting with "." inside folders are left out, and
 * a folder reached twice (a symbolic link to a parent) is read once.
 */
async function collect(
  paths: string[],
  out: Found[],
  missing: ImportItem[],
  seen = new Set<string>(),
): Promise<void> {
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
      const id = `${info.dev}:${info.ino}`
      if (seen.has(id)) continue
      seen.add(id)
      const entries = (await readdir(path)).filter((name) => !name.startsWith('.')).sort()
      await collect(
        entries.map((name) => join(path, name)),
        out,
        missing,
        seen,
      )
    } else if (info.isFile()) out.push({ path, size: info.size })
    // A FIFO or a device could be read for ever: named, not read (it used to vanish from the list).
    else
      missing.push({ status: 'failed', label: path, detail: 'not a regular file (a FIFO, device or socket)' })
  }
}

export function summary(files: number, items: ImportItem[]): string {
  const { counts, reasons } = countItems(items)
  const lines = [
    `${files} ${files === 1 ? 'file' : 'files'}, ${items.length} ${items.length === 1 ? 'item' : 'items'}: ${counts.map(([s, n]) => `${n} ${s}`).join(', ')}`,
  ]
  if (reasons.length > 0) {
    lines.push(`quarantined: ${reasons.map(([code, n]) => `${code} (${n})`).join(', ')}`)
    lines.push('Quarantined items wait in /reports/quarantine (GET /api/v1/ingest/quarantine) for a retry.')
  }
  return lines.join('\n')
}

export async function runImport(
  args: string[],
  runtime: { config: Config; database: Database },
): Promise<string> {
  const { values, positionals } = parseOptions(args, { email: { type: 'string' } }, true)
  if (!values.email) throw new CliUsageError(`--email is required\nusage: bun run cli\n${IMPORT_USAGE}`)
  if (positionals.length === 0)
    throw new CliUsageError(`give at least one file or folder\nusage: bun run cli\n${IMPORT_USAGE}`)
  const { config, database } = runtime
  const member = await stores(database).accounts.findMembershipByEmail(values.email)
  if (member === null) throw new CliError(noAccountWith(`no account with the e-mail ${values.email}`))

  const files: Found[] = []
  const items: ImportItem[] = []
  await collect(positionals, files, items)
  const total = files.reduce((sum, f) => sum + f.size, 0)
  const bar = progress(process.stdout, total)
  const report = (item: ImportItem) => {
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
    const runtime = { config, database, boss, logger, now, ...resolvers(config, now) }
    const importer = reportImport(runtime, {
      ...intake(runtime),
      forensicTls: stores(database, boss).forensicTls,
    })
    const context: ImportContext = {
      importer,
      accountId: member.accountId,
      source: 'cli',
      maxBytes: config.ingestMaxMessageBytes,
    }
    let done = 0
    for (const file of files) {
      bar.update(done, file.path)
      // A large mbox moves the bar as it is read.
      const reading = (bytes: number) => bar.update(done + bytes, file.path)
      try {
        for await (const item of importBlob(context, file.path, Bun.file(file.path), reading)) report(item)
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
