import { expect, test } from 'bun:test'
import { setProcessNice } from '../../../infrastructure/runtime/process-priority.ts'

// WORKER_NICE and INGEST_PROCESS_NICE (infrastructure/runtime/process-priority.ts). A Linux thread
// has a nice value of its own, so the process's every thread must be lowered, and threads started
// afterwards inherit it. Run in a process of its own: lowering this test runner cannot be undone.

const module = new URL('../../../infrastructure/runtime/process-priority.ts', import.meta.url).pathname

test('every thread of the process, and each one started later, runs at the new nice value', async () => {
  const script = `
import { readdirSync } from 'node:fs'
import { getPriority } from 'node:os'
import { setProcessNice } from ${JSON.stringify(module)}
const nices = () => readdirSync('/proc/self/task').map((tid) => getPriority(Number(tid)))
// A thread that exists before the call (a Worker has threads of its own).
const early = new Worker(URL.createObjectURL(new Blob(['postMessage(0); setInterval(() => {}, 1000)'])))
await new Promise((resolve) => (early.onmessage = resolve))
const before = nices()
const outcome = setProcessNice(7)
const after = nices()
const late = new Worker(URL.createObjectURL(new Blob(['postMessage(0); setInterval(() => {}, 1000)'])))
await new Promise((resolve) => (late.onmessage = resolve))
console.log(JSON.stringify({ before, outcome, after, later: nices() }))
process.exit(0)
`
  const child = Bun.spawn([process.execPath, '-e', script], { stdout: 'pipe', stderr: 'inherit' })
  const text = await new Response(child.stdout).text()
  expect(await child.exited).toBe(0)
  const got = JSON.parse(text) as {
    before: number[]
    outcome: { nice: number; threads: number }
    after: number[]
    later: number[]
  }
  expect(got.before.every((n) => n === 0)).toBe(true)
  expect(got.outcome).toEqual({ nice: 7, threads: got.before.length })
  expect(got.after).toEqual(got.before.map(() => 7))
  expect(got.later.length).toBeGreaterThan(got.after.length)
  expect(got.later.every((n) => n === 7)).toBe(true)
})

test('a value outside 0-19 is refused before anything changes', () => {
  for (const bad of [-1, 20, 1.5, Number.NaN]) expect(() => setProcessNice(bad)).toThrow(RangeError)
})
