// What a benchmark cost the machine, from /proc (Linux): CPU time per process and for the whole
// machine (sizing figures), and a process's peak RSS. CPU figures are null where /proc is not there.

/** User plus system CPU seconds a process has used so far. */
export async function processCpuSeconds(pid: number | 'self'): Promise<number | null> {
  try {
    // Fields after the command name (which may hold spaces and parentheses): utime and stime are
    // the 12th and 13th there, in clock ticks (100 a second on Linux: proc(5)).
    const stat = await Bun.file(`/proc/${pid}/stat`).text()
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return null
  }
}

/**
 * CPU seconds a process's JavaScriptCore compiler threads (named JITWorker) have used so far: the
 * JIT's share of the process's CPU, which is large for a minute or so after a start under load
 * (docs/ingestion.md, "The JIT's share of a fresh service's CPU").
 */
export async function jitCpuSeconds(pid: number | 'self'): Promise<number | null> {
  try {
    const { readdir } = await import('node:fs/promises')
    let ticks = 0
    for (const task of await readdir(`/proc/${pid}/task`)) {
      const stat = await Bun.file(`/proc/${pid}/task/${task}/stat`)
        .text()
        .catch(() => '')
      if (!stat.includes('(JITWorker)')) continue
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      ticks += Number(fields[11]) + Number(fields[12])
    }
    return ticks / 100
  } catch {
    return null
  }
}

/** CPU seconds all cores have spent busy so far (everything but idle and I/O wait). */
export async function machineBusySeconds(): Promise<number | null> {
  try {
    const ticks = (await Bun.file('/proc/stat').text())
      .split('\n')[0]!
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number)
    return (ticks.reduce((a, b) => a + b, 0) - ticks[3]! - ticks[4]!) / 100
  } catch {
    return null
  }
}

/** Starts counting; `stop()` gives the CPU seconds each process and the machine spent since. */
export async function cpuSince<K extends string>(pids: Record<K, number | 'self'>) {
  const names = Object.keys(pids) as K[]
  const read = async () => ({
    machine: await machineBusySeconds(),
    processes: await Promise.all(names.map((name) => processCpuSeconds(pids[name]))),
    jit: await Promise.all(names.map((name) => jitCpuSeconds(pids[name]))),
  })
  const start = await read()
  const since = (a: number | null | undefined, b: number | null | undefined) =>
    a == null || b == null ? null : b - a
  return {
    async stop(): Promise<{
      machine: number | null
      processes: Record<K, number | null>
      /** Of each process's CPU, its JIT compiler threads' (jitCpuSeconds). */
      jit: Record<K, number | null>
    }> {
      const end = await read()
      const processes = {} as Record<K, number | null>
      const jit = {} as Record<K, number | null>
      names.forEach((name, i) => {
        processes[name] = since(start.processes[i], end.processes[i])
        jit[name] = since(start.jit[i], end.jit[i])
      })
      return { machine: since(start.machine, end.machine), processes, jit }
    },
  }
}

/**
 * The process's peak RSS from now on. On Linux the kernel's own high-water mark (VmHWM), reset
 * first through /proc/self/clear_refs, so no short peak is missed; elsewhere RSS sampled every 20 ms
 * (sampling is not free: every 5 ms it took a tenth of the measured time).
 */
export async function startPeakRss(): Promise<{ how: string; stop(): Promise<number> }> {
  const status = '/proc/self/status'
  try {
    await Bun.write('/proc/self/clear_refs', '5')
    return {
      how: 'kernel high-water mark',
      async stop() {
        const hwm = /VmHWM:\s+(\d+) kB/.exec(await Bun.file(status).text())
        if (hwm === null) throw new Error('no VmHWM in /proc/self/status')
        return Number(hwm[1]) * 1024
      },
    }
  } catch {
    let peak = process.memoryUsage.rss()
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage.rss())
    }, 20)
    return {
      how: 'sampled every 20 ms',
      async stop() {
        clearInterval(sampler)
        return peak
      },
    }
  }
}
