import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { progress, renderBar } from '../../src/cli/progress.ts'
import { runCli } from '../support/processes.ts'
import { createPostgresDatabase } from '../support/test-db.ts'

// `bun run cli import` over a folder of mixed files (real samples, tests/fixtures/*/SOURCES.md):
// every file gets a line with its outcome, and the summary counts them.

const AGG = 'tests/fixtures/dmarc-aggregate'
let database: Awaited<ReturnType<typeof createPostgresDatabase>>
let env: Record<string, string>
let dir: string

/** An mboxrd file of these messages: a separator line each, ">"-quoted From lines, a blank line after. */
function mbox(messages: string[]): string {
  return messages
    .map(
      (m) =>
        `From MAILER-DAEMON Thu Nov 26 10:00:00 2026\n${m.replace(/^(>*From )/gm, '>$1').replace(/\n?$/, '\n')}\n`,
    )
    .join('')
}

beforeAll(async () => {
  database = await createPostgresDatabase()
  env = { DATABASE_URL: database.url, INGEST_DOMAIN: 'in.example.org', INGEST_MAX_MESSAGE_BYTES: '1048576' }
  expect((await runCli(['migrate'], env)).code).toBe(0)
  const account = await runCli(['account', 'create', '--email', 'import@example.org'], env)
  const accountId = JSON.parse(account.stdout).account_id
  const sql = postgres(database.url, { max: 1, onnotice: () => {} })
  for (const [name, verified] of [
    ['example.com', true],
    ['ueber.net', true],
    ['company-y.example', true],
    ['example.de', false],
  ] as const) {
    await sql`insert into domains (account_id, name, verification_token, verified_at)
      values (${accountId}, ${name}, 'token', ${verified ? new Date() : null})`
  }
  await sql.end()

  dir = mkdtempSync(join(tmpdir(), 'dw-import-'))
  mkdirSync(join(dir, 'archive/2018'), { recursive: true })
  mkdirSync(join(dir, 'mail'))
  const copy = (from: string, to: string) => copyFileSync(from, join(dir, to))
  copy(`${AGG}/parsedmarc/aggregate/example.net!example.com!1529366400!1529452799.xml`, 'archive/2018/a.xml')
  copy(`${AGG}/parsedmarc/extract_report/nice-input.xml.gz`, 'archive/2018/b.xml.gz')
  copy(`${AGG}/parsedmarc/extract_report/nice-input.xml.zip`, 'archive/c.zip')
  copy(
    `${AGG}/parsedmarc/aggregate/fastmail.com!example.com!1516060800!1516147199!102675056.xml.gz`,
    'archive/d.xml.gz',
  )
  copy(`${AGG}/parsedmarc/aggregate/ikea.com!example.de!1538690400!1538776800.xml`, 'archive/e.xml')
  copy('tests/fixtures/tls-rpt/rfc8460-example.json', 'archive/tls.json')
  copy(`${AGG}/mox/google.eml`, 'mail/google.eml')
  const eml = (name: string) => Bun.file(`${AGG}/mox/${name}.eml`).text()
  writeFileSync(
    join(dir, 'mail/Inbox'),
    mbox([
      await eml('outlook'),
      'From: someone@example.org\nSubject: lunch\n\nFrom the kitchen: lunch at noon.\n',
      await eml('yahoo'),
    ]),
  )
  writeFileSync(join(dir, 'notes.txt'), 'these are my DMARC reports\n')
  writeFileSync(join(dir, 'empty.xml'), '')
  writeFileSync(join(dir, '.DS_Store'), 'Bud1')
  writeFileSync(join(dir, 'huge.xml'), `<?xml version="1.0"?><feedback>${' '.repeat(1_100_000)}`)
}, 60_000)
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true })
  await database.drop()
})

describe('cli import', () => {
  test('a folder of mixed files: a line per file (and per mbox message), then the summary', async () => {
    // A link back to the top folder: each folder is read once, not forever.
    symlinkSync(dir, join(dir, 'archive/up'))
    const run = await runCli(['import', '--email', 'import@example.org', dir], env)
    rmSync(join(dir, 'archive/up'))
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    const lines = run.stdout.trimEnd().split('\n')
    // No progress bar off a terminal: plain lines only.
    expect(run.stdout).not.toContain('\x1b')
    const line = (name: string) => {
      const found = lines.filter((l) => l.includes(`${dir}/${name}  `))
      expect(found).toHaveLength(1)
      return found[0]!
    }
    expect(line('archive/2018/a.xml')).toMatch(
      /^stored {6}.*aggregate example\.com .*report b043f0e264cf4ea995e93765242f6dfb/,
    )
    expect(line('archive/2018/b.xml.gz')).toMatch(/^stored .*report 11038226378739404135/)
    expect(line('archive/c.zip')).toMatch(/^duplicate .*report 11038226378739404135/)
    expect(line('archive/d.xml.gz')).toMatch(/^quarantined .*domain_not_in_account: .*indemed\.com/)
    expect(line('archive/e.xml')).toMatch(/^quarantined .*domain_not_verified/)
    expect(line('archive/tls.json')).toMatch(/^stored .*tls-rpt company-y\.example/)
    expect(line('mail/google.eml')).toMatch(/^stored .*aggregate ueber\.net .*report 13488712042596170873/)
    expect(line('mail/Inbox #1')).toMatch(
      /^stored .*aggregate ueber\.net .*report 8be4eb9d89044800947965b8a040291c/,
    )
    expect(line('mail/Inbox #2')).toMatch(/^quarantined .*no_report_found/)
    expect(line('mail/Inbox #3')).toMatch(/^stored .*aggregate ueber\.net .*report 1559613526\.307161/)
    expect(line('notes.txt')).toMatch(/^skipped .*not a report file, an email or an mbox/)
    expect(line('empty.xml')).toMatch(/^skipped .*empty file/)
    expect(line('huge.xml')).toMatch(/^refused .*larger than INGEST_MAX_MESSAGE_BYTES \(1048576 bytes\)/)
    expect(run.stdout).not.toContain('.DS_Store')
    expect(lines.slice(-3)).toEqual([
      '11 files, 13 items: 6 stored, 1 duplicate, 3 quarantined, 2 skipped, 1 refused',
      'quarantined: domain_not_in_account (1), domain_not_verified (1), no_report_found (1)',
      'Quarantined items wait in /reports/quarantine (GET /api/v1/ingest/quarantine) for a retry.',
    ])
  }, 60_000)

  test('run again, everything stored before is a duplicate; the database holds each report once', async () => {
    const run = await runCli(
      ['import', '--email', 'import@example.org', join(dir, 'archive'), join(dir, 'mail/google.eml')],
      env,
    )
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('7 files, 7 items: 0 stored, 5 duplicate, 2 quarantined')
    const sql = postgres(database.url, { max: 1, onnotice: () => {} })
    const [counts] = await sql`select (select count(*)::int from aggregate_reports) as aggregate,
      (select count(*)::int from tls_reports) as tls,
      (select count(*)::int from ingest_messages where source = 'cli' and status = 'quarantined') as quarantined`
    await sql.end()
    expect(counts).toEqual({ aggregate: 5, tls: 1, quarantined: 5 })
  }, 60_000)

  test('usage problems exit 2 and unknown users 1, with the reason; a missing path is a line', async () => {
    const noEmail = await runCli(['import', dir], env)
    expect(noEmail.code).toBe(2)
    expect(noEmail.stderr).toContain('--email is required')
    const noPath = await runCli(['import', '--email', 'import@example.org'], env)
    expect(noPath.code).toBe(2)
    expect(noPath.stderr).toContain('give at least one file or folder')
    const nobody = await runCli(['import', '--email', 'nobody@example.org', dir], env)
    expect(nobody.code).toBe(1)
    expect(nobody.stderr.trim()).toBe(
      'no account with the e-mail nobody@example.org: check --email, or create one with `bun run cli account create --email …`',
    )
    const missing = await runCli(['import', '--email', 'import@example.org', join(dir, 'nope.xml')], env)
    expect(missing.code).toBe(0)
    expect(missing.stdout).toContain(`failed      ${join(dir, 'nope.xml')}  cannot read: ENOENT`)
    // A FIFO is named, not read (reading it could wait for ever) and not passed over in silence.
    const fifo = join(dir, 'pipe.fifo')
    expect(Bun.spawnSync(['mkfifo', fifo]).exitCode).toBe(0)
    const special = await runCli(['import', '--email', 'import@example.org', fifo, '/dev/zero'], env)
    rmSync(fifo, { force: true })
    expect(special.code).toBe(0)
    expect(special.stdout).toContain(`failed      ${fifo}  not a regular file`)
    expect(special.stdout).toContain('failed      /dev/zero  not a regular file')
  }, 60_000)
})

describe('the progress bar', () => {
  test('is drawn on a terminal only, under the lines, and cleared at the end', () => {
    const written: string[] = []
    const tty = progress({ isTTY: true, columns: 60, write: (s: string) => written.push(s) }, 2 * 1024 * 1024)
    tty.update(1024 * 1024, '/some/long/path/to/a/report/file.xml.gz')
    tty.line('stored      file.xml.gz  aggregate example.com')
    tty.finish()
    const out = written.join('')
    expect(out).toContain('[############............]  50% 1.0 MB of 2.0 MB')
    expect(out).toContain('\r\x1b[2Kstored      file.xml.gz  aggregate example.com\n[####')
    expect(out.endsWith('\r\x1b[2K')).toBe(true)
    const plain: string[] = []
    const pipe = progress({ isTTY: false, write: (s: string) => plain.push(s) }, 10)
    pipe.update(5, 'x')
    pipe.line('stored      x')
    pipe.finish()
    expect(plain).toEqual(['stored      x\n'])
  })

  test('fits the terminal width, keeping the end of the path', () => {
    const bar = renderBar(0, 100, `/very/${'deep/'.repeat(20)}report.xml`, 70)
    expect(bar.length).toBeLessThanOrEqual(69)
    expect(bar.endsWith('report.xml')).toBe(true)
  })
})
