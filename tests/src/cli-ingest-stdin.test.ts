import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cleanEnv, runCli } from '../support/processes.ts'
import { createPostgresDatabase } from '../support/test-db.ts'

// `bun run cli ingest` spools its stdin (docs/ingestion.md, "Memory", "The CLI pipe"): reading stops
// as soon as the message passes INGEST_MAX_MESSAGE_BYTES, the process never holds the message (it
// used to read all of stdin first: 500 MB piped in reached 669 MB of RSS before the refusal), and
// its spool file is gone when it exits.

const ROOT = new URL('../../', import.meta.url).pathname
const MiB = 1024 * 1024
const LIMIT = 8 * MiB
let database: Awaited<ReturnType<typeof createPostgresDatabase>>
let env: Record<string, string>
let spoolDir: string
let reportAddress: string

beforeAll(async () => {
  database = await createPostgresDatabase()
  spoolDir = mkdtempSync(join(tmpdir(), 'dw-cli-spool-'))
  env = {
    DATABASE_URL: database.url,
    INGEST_DOMAIN: 'in.example.org',
    INGEST_MAX_MESSAGE_BYTES: String(LIMIT),
    TMPDIR: spoolDir,
  }
  expect((await runCli(['migrate'], env)).code).toBe(0)
  const account = await runCli(['account', 'create', '--email', 'pipe@example.org'], env)
  reportAddress = JSON.parse(account.stdout).report_address
}, 60_000)
afterAll(async () => {
  rmSync(spoolDir, { recursive: true, force: true })
  await database.drop()
})

/** A message of `total` bytes made on demand (never held here), and what the child read of it. */
function message(header: string, total: number) {
  const state = { sent: 0 }
  const head = new TextEncoder().encode(header)
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (state.sent >= total) return controller.close()
      const chunk = state.sent === 0 ? head : new Uint8Array(Math.min(MiB, total - state.sent)).fill(0x41)
      state.sent += chunk.byteLength
      controller.enqueue(chunk)
    },
  })
  return { stream, state }
}

async function ingest(args: string[], stdin: ReadableStream<Uint8Array>) {
  const child = Bun.spawn(['bun', 'src/cli.ts', 'ingest', ...args], {
    cwd: ROOT,
    env: cleanEnv(env),
    stdin,
    stdout: 'pipe',
    stderr: 'pipe',
  })
  // The kernel's high-water mark of the child's own memory (VmHWM), read while it runs: not
  // resourceUsage's maxRSS, which Linux starts at this test process's size at the fork (a test run
  // after others read 208 MB for a child that used 60 MB).
  let peakBytes = 0
  const watch = setInterval(() => {
    try {
      const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))
      if (kb !== null) peakBytes = Math.max(peakBytes, Number(kb[1]) * 1024)
    } catch {
      // Exited between two reads.
    }
  }, 5)
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  clearInterval(watch)
  expect(peakBytes).toBeGreaterThan(0)
  return { code, stdout, stderr: stderr.trim(), peakBytes }
}

const storedMessages = async () => {
  const { default: postgres } = await import('postgres')
  const sql = postgres(database.url, { max: 1, onnotice: () => {} })
  try {
    return [...(await sql<{ size: number; sha256: string }[]>`select size, sha256 from ingest_messages`)]
  } finally {
    await sql.end()
  }
}

test.each([
  ['handed on', []],
  ['--direct', ['--direct']],
])(
  'a message far over the limit (%s) is refused once the limit is passed, in bounded memory',
  async (_, flags) => {
    const piped = 256 * MiB
    const { stream, state } = message(`Delivered-To: ${reportAddress}\r\nSubject: big\r\n\r\n`, piped)
    const answer = await ingest(flags, stream)
    expect(answer.code).toBe(1)
    expect(answer.stderr).toBe(`not accepted: the message is larger than ${LIMIT} bytes`)
    // Reading stopped at the limit (and what the pipe and the stream's buffers held), not at the end.
    expect(state.sent).toBeLessThan(LIMIT + 8 * MiB)
    // The process's modules and runtime, not the message: far under what was piped (measured ~60 MB).
    expect(answer.peakBytes).toBeLessThan(160 * MiB)
    expect(readdirSync(spoolDir)).toEqual([])
    expect(await storedMessages()).toEqual([])
  },
  60_000,
)

test('a message larger than the spool keeps in memory is stored whole, routed by its header', async () => {
  const total = 3 * MiB + 17
  const header = `Delivered-To: ${reportAddress}\r\nSubject: large\r\n\r\n`
  const { stream } = message(header, total)
  const answer = await ingest(['--direct'], stream)
  expect(answer.stderr).toBe('')
  expect(answer.code).toBe(0)
  expect(JSON.parse(answer.stdout)).toEqual({ id: expect.any(String), status: 'accepted' })
  const bytes = new Uint8Array(total).fill(0x41)
  bytes.set(new TextEncoder().encode(header))
  const sha256 = new Bun.CryptoHasher('sha256').update(bytes).digest('hex')
  expect(await storedMessages()).toEqual([{ size: total, sha256 }])
  expect(readdirSync(spoolDir)).toEqual([])
}, 60_000)
