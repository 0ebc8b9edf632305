// CPU time from /proc (Linux), for sizing figures: where a benchmark's CPU went, per process and
// for the whole machine. Null where /proc is not there.

/** User plus system CPU seconds a process has used so far. */
export async function processCpuSeconds(pid: number | 'self'): Promise<number | null> {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and
    // 13th, in clock ticks (100 a second on Linux: proc(5)).
    const fields = (await Bun.file(`/proc/${pid}/stat`).text()).split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
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

/** Starts counting; `stop()` gives the seconds each counter advanced (null where unknown). */
export async function cpuSince(pids: Record<string, number | 'self'>) {
  const read = async () => {
    const out: Record<string, number | null> = { machine: await machineBusySeconds() }
    for (const [name, pid] of Object.entries(pids)) out[name] = await processCpuSeconds(pid)
    return out
  }
  const start = await read()
  return {
    async stop(): Promise<Record<string, number | null>> {
      const end = await read()
      const spent: Record<string, number | null> = {}
      for (const name of Object.keys(end)) {
        const a = start[name]
        const b = end[name]
        spent[name] = a == null || b == null ? null : b - a
      }
      return spent
    },
  }
}
