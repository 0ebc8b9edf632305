import { rmSync } from 'node:fs'
import type { Subprocess } from 'bun'

// A server the tests start from a Debian package (PowerDNS, Knot DNS) as a child process whose
// files live in `dir`: its stderr drained as it comes, so a chatty server never blocks on a full
// pipe, keeping the tail to explain a failed start.

export interface ServerProcess {
  child: Subprocess
  /** The last 20,000 characters the server wrote to stderr. */
  log(): string
  /** Stops the server and removes `dir`. */
  stop(): Promise<void>
}

export function startServerProcess(command: string[], dir: string): ServerProcess {
  const child: Subprocess = Bun.spawn(command, { stdin: 'ignore', stdout: 'ignore', stderr: 'pipe' })
  let log = ''
  ;(async () => {
    const decoder = new TextDecoder()
    for await (const chunk of child.stderr as ReadableStream<Uint8Array>) {
      log = (log + decoder.decode(chunk, { stream: true })).slice(-20_000)
    }
  })().catch(() => {})
  return {
    child,
    log: () => log,
    async stop() {
      child.kill('SIGTERM')
      await child.exited
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
