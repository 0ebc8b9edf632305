import type postgres from 'postgres'
import { type ServiceProcess, startService } from './processes.ts'

// Helpers for tests/src/scale.test.ts: several service processes on one PostgreSQL, told apart in
// pg_stat_activity by the application_name their connection URL carries (postgres.js and
// node-postgres both take it from the URL's query), so the test can see which worker holds a job.

export interface Node {
  name: string
  service: ServiceProcess
  /** What the process wrote to stderr (drained, so a chatty process never blocks on a full pipe). */
  stderr: string[]
  /** Parsed JSON log lines so far. */
  logs(): Record<string, unknown>[]
  exited: boolean
}

/** The database URL with `application_name=<name>`: the tag of every connection the process opens. */
export function taggedUrl(url: string, name: string): string {
  const tagged = new URL(url)
  tagged.searchParams.set('application_name', name)
  return tagged.toString()
}

export async function startNode(name: string, env: Record<string, string>): Promise<Node> {
  const service = await startService({ ...env, DATABASE_URL: taggedUrl(env.DATABASE_URL!, name) })
  const stderr: string[] = []
  const node: Node = {
    name,
    service,
    stderr,
    exited: false,
    logs() {
      const parsed: Record<string, unknown>[] = []
      for (const line of service.lines) {
        try {
          parsed.push(JSON.parse(line))
        } catch {}
      }
      return parsed
    },
  }
  ;(async () => {
    const decoder = new TextDecoder()
    try {
      for await (const chunk of service.child.stderr) stderr.push(decoder.decode(chunk))
    } catch {}
  })()
  service.child.exited.then(() => {
    node.exited = true
  })
  return node
}

/** Polls `probe` until it returns something other than null/undefined/false. */
export async function waitUntil<T>(
  label: string,
  probe: () => Promise<T | null | undefined | false>,
  timeoutMs: number,
  intervalMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  while (true) {
    const value = await probe()
    if (value !== null && value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${label}`)
    await Bun.sleep(intervalMs)
  }
}

/**
 * A TCP listener that counts connections and closes each at once: an IMAP "server" for the mailbox
 * cron, so every run of the cron's handler (one connection per poll) is counted from outside.
 */
export function connectionCounter(): { port: number; at: Date[]; stop(): void } {
  const at: Date[] = []
  const listener = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(socket) {
        at.push(new Date())
        socket.end()
      },
      data() {},
    },
  })
  return { port: listener.port, at, stop: () => listener.stop(true) }
}

/**
 * Samples pg_stat_activity every few milliseconds while it runs and records which tagged processes
 * were seen running a statement that matches `pattern` (a case-insensitive regular expression):
 * evidence of who did the work, not a count of it (a statement shorter than the interval can be
 * missed).
 */
export function activitySampler(
  sql: postgres.Sql,
  pattern: string,
  intervalMs = 20,
): { seen: Map<string, number>; stop(): Promise<void> } {
  const seen = new Map<string, number>()
  let running = true
  const loop = (async () => {
    while (running) {
      const rows = await sql<{ application_name: string }[]>`
        select application_name from pg_stat_activity
        where datname = current_database() and state = 'active' and pid <> pg_backend_pid()
          and query ~* ${pattern}`
      for (const row of rows) seen.set(row.application_name, (seen.get(row.application_name) ?? 0) + 1)
      await Bun.sleep(intervalMs)
    }
  })()
  return {
    seen,
    async stop() {
      running = false
      await loop
    },
  }
}
