import type { Subprocess } from 'bun'

// Real processes of the service and the CLI, for the tests that prove the README's commands work.

const ROOT = new URL('../../', import.meta.url).pathname

export function cleanEnv(env: Record<string, string>): Record<string, string> {
  const base: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !['DATABASE_URL', 'DATA_DIR', 'PORT', 'ROLE'].includes(key)) base[key] = value
  }
  return { ...base, LOG_LEVEL: 'info', ...env }
}

export async function runCli(
  args: string[],
  env: Record<string, string>,
  stdin?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = Bun.spawn(['bun', 'src/cli.ts', ...args], {
    cwd: ROOT,
    env: cleanEnv(env),
    stdin: stdin === undefined ? 'ignore' : new TextEncoder().encode(stdin),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  return { code, stdout, stderr }
}

export interface ServiceProcess {
  child: Subprocess<'ignore', 'pipe', 'pipe'>
  url: string
  lines: string[]
  waitFor(
    predicate: (line: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>
}

export async function startService(env: Record<string, string>, timeoutMs = 60_000): Promise<ServiceProcess> {
  const child = Bun.spawn(['bun', 'src/main.ts'], {
    cwd: ROOT,
    env: cleanEnv({ PORT: '0', HOST: '127.0.0.1', ...env }),
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const lines: string[] = []
  const waiters: {
    predicate: (line: Record<string, unknown>) => boolean
    resolve: (l: Record<string, unknown>) => void
  }[] = []
  ;(async () => {
    const decoder = new TextDecoder()
    let buffer = ''
    for await (const chunk of child.stdout) {
      buffer += decoder.decode(chunk, { stream: true })
      let newline = buffer.indexOf('\n')
      while (newline >= 0) {
        const line = buffer.slice(0, newline)
        buffer = buffer.slice(newline + 1)
        lines.push(line)
        try {
          const parsed = JSON.parse(line)
          for (const waiter of [...waiters]) {
            if (waiter.predicate(parsed)) {
              waiters.splice(waiters.indexOf(waiter), 1)
              waiter.resolve(parsed)
            }
          }
        } catch {}
        newline = buffer.indexOf('\n')
      }
    }
  })()
  const waitFor: ServiceProcess['waitFor'] = (predicate, ms = timeoutMs) => {
    for (const line of lines) {
      try {
        const parsed = JSON.parse(line)
        if (predicate(parsed)) return Promise.resolve(parsed)
      } catch {}
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(async () => {
        const stderr = await new Response(child.stderr).text().catch(() => '')
        reject(
          new Error(`timed out waiting for a log line; stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`),
        )
      }, ms)
      waiters.push({
        predicate,
        resolve: (line) => {
          clearTimeout(timer)
          resolve(line)
        },
      })
    })
  }
  const started = await waitFor((line) => line.msg === 'dmarcwatch started')
  const url = typeof started.url === 'string' ? started.url : ''
  return { child, url, lines, waitFor }
}
