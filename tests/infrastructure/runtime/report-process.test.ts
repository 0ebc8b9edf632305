import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { concurrencyLimit } from '../../../domain/shared/concurrency-limit.ts'
import { ReportProcessError, reportProcesses } from '../../../infrastructure/runtime/report-process.ts'

// The parent's side of a report process (infrastructure/runtime/report-process.ts), with small
// child scripts in place of src/report-process.ts (tests/src/report-process.test.ts runs that one):
// the task goes out over IPC, the first answer comes back with the kernel's figures for the child,
// and every way a child can fail is an error that names the work.

const dir = mkdtempSync(join(tmpdir(), 'dw-report-process-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function child(name: string, body: string): string {
  const path = join(dir, `${name}.ts`)
  writeFileSync(
    path,
    // The settings first, then the task (infrastructure/runtime/report-process.ts, ChildMessage).
    `const messages = []
let waiting = null
process.on('message', (m) => { messages.push(m); waiting?.() })
const next = async () => { while (messages.length === 0) await new Promise((r) => (waiting = r)); return messages.shift() }
const settings = await next()
const task = await next()
${body}
`,
  )
  return path
}

const run =
  (entry: string, options: { timeoutMs?: number; gate?: ReturnType<typeof concurrencyLimit> } = {}) =>
  (label: string) =>
    reportProcesses({ entry, settings: { answer: 42 }, gate: options.gate ?? concurrencyLimit(2) }).run(
      label,
      { kind: 'message', messageId: label },
      options.timeoutMs ?? 20_000,
    )

test('the child gets its settings, then its task, and its answer comes back with its costs', async () => {
  // The child reports its own peak (src/report-process.ts reads its VmHWM); the CPU is the kernel's.
  const echo = child(
    'echo',
    `const held = new Uint8Array(64e6).fill(1)
process.send({ ok: true, result: { settings, task, held: held.length }, rssAtTaskBytes: 45e6, peakRssBytes: 123e6 }, undefined, undefined, () => process.exit(0))`,
  )
  const got = await run(echo)('message m-1')
  expect(got.result).toEqual({
    settings: { settings: { answer: 42 } },
    task: { label: 'message m-1', task: { kind: 'message', messageId: 'message m-1' } },
    held: 64e6,
  })
  expect(got.peakRssBytes).toBe(123e6)
  expect(got.rssAtTaskBytes).toBe(45e6)
  // Filling 64 MB takes CPU time the kernel counts for the child.
  expect(got.cpuMs).toBeGreaterThan(0)
  expect(got.ms).toBeGreaterThan(0)
})

test('a child that answers with an error: the error, with the message id', async () => {
  const failing = child(
    'failing',
    `process.send({ ok: false, error: 'the database went away' }, undefined, undefined, () => process.exit(1))`,
  )
  const error = await run(failing)('message m-2').catch((e) => e)
  expect(error).toBeInstanceOf(ReportProcessError)
  expect(error.message).toBe('the report process for message m-2 failed: the database went away')
})

test('a child that exits without an answer, or is killed, fails the message', async () => {
  const exits = child('exits', 'process.exit(3)')
  await expect(run(exits)('message m-3')).rejects.toThrow(
    'message m-3 failed: exited with code 3 and no answer',
  )
  const killed = child('killed', "process.kill(process.pid, 'SIGKILL')")
  await expect(run(killed)('message m-4')).rejects.toThrow('message m-4 failed: killed by SIGKILL')
})

test('a child that does not answer in time is killed', async () => {
  const hangs = child('hangs', 'await new Promise(() => {})')
  const started = performance.now()
  await expect(run(hangs, { timeoutMs: 500 })('message m-5')).rejects.toThrow(
    'message m-5 failed: killed by SIGKILL',
  )
  expect(performance.now() - started).toBeLessThan(10_000)
})

test('an answer counts even when the child fails while closing after it', async () => {
  const late = child(
    'late',
    `process.send({ ok: true, result: 'stored' }, undefined, undefined, () => {
  process.send({ ok: false, error: 'closing failed' }, undefined, undefined, () => process.exit(1))
})`,
  )
  expect((await run(late)('message m-6')).result).toBe('stored')
})

test('the gate bounds the children at once', async () => {
  const slow = child(
    'slow',
    `const started = Date.now()
await Bun.sleep(300)
process.send({ ok: true, result: [started, Date.now()] }, undefined, undefined, () => process.exit(0))`,
  )
  const one = run(slow, { gate: concurrencyLimit(1) })
  const spans = (await Promise.all([one('a'), one('b'), one('c')])).map((r) => r.result as [number, number])
  spans.sort((x, y) => x[0] - y[0])
  // Each started after the one before had answered.
  for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1])
}, 30_000)

test('a warmed process takes the next task; without one, a task starts its own', async () => {
  // The child notes when it started: a warmed one started before its task was sent.
  const stamped = child(
    'stamped',
    `process.send({ ok: true, result: { pid: process.pid, at: performance.timeOrigin } }, undefined, undefined, () => process.exit(0))`,
  )
  const processes = reportProcesses({ entry: stamped, settings: {}, gate: concurrencyLimit(1) })
  processes.warm()
  processes.warm() // at most one waits
  await Bun.sleep(300)
  const before = Date.now()
  const first = await processes.run('message w-1', {}, 10_000)
  expect(first.startedAhead).toBe(true)
  expect((first.result as { at: number }).at).toBeLessThan(before)
  // Without a warm one, a task starts its own.
  const cold = await processes.run('message w-2', {}, 10_000)
  expect(cold.startedAhead).toBe(false)
  expect((cold.result as { at: number }).at).toBeGreaterThanOrEqual(before)
})
