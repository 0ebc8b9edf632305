import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import type { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import { queueOf, socketServer } from '../../../infrastructure/db/embedded.ts'
import { msg, WireClient } from '../../support/pg-wire.ts'

// The PGlite socket queue (infrastructure/db/socket-queue.ts) under every way a client can leave:
// clients speak the wire protocol byte by byte, stop after each step of a session and then vanish
// (killed) or say goodbye (Terminate), while another client waits for the lock and a third is still
// connecting. After each, the lock is free, the service answers, nothing uncommitted was kept, and
// the waiting clients are served (or dropped, if they were the ones that left).

// Long enough that a busy machine does not cut off the holders of the other tests.
const IDLE_TIMEOUT_MS = 1_500
const dir = mkdtempSync(join(tmpdir(), 'dw-queue-'))
const path = join(dir, '.s.PGSQL.5432')
let pglite: PGlite
let server: PGLiteSocketServer

beforeAll(async () => {
  pglite = await PGlite.create()
  await pglite.exec('create table t (v text)')
  server = socketServer(pglite, path, { idleTimeoutMs: IDLE_TIMEOUT_MS })
  await server.start()
})

afterAll(async () => {
  await server.stop()
  await pglite.close()
  rmSync(dir, { recursive: true, force: true })
})

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not complete within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

async function until(condition: () => boolean, what: string, ms = 3_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await Bun.sleep(5)
  }
}

const rows = async (v: string) =>
  (await pglite.query<{ n: number }>('select count(*)::int as n from t where v = $1', [v])).rows[0]!.n

/** The lock is free, no one waits, and the service's own query runs at once. */
async function settled(): Promise<void> {
  const queue = queueOf(server)
  await until(() => queue.state().holder === null && queue.state().waiting === 0, 'the queue is idle')
  await within(pglite.query('select 1'), 1_000, "the service's own query")
}

interface Step {
  send: Uint8Array[]
  /** The reply that ends the step (none: the messages wait for a later Sync). */
  until: string | null
}
interface Script {
  name: string
  /** Steps after which the script's rows are committed. */
  commitsAfter: number
  steps: (label: string) => Step[]
}

const insert = (label: string, n: number) => `insert into t values ('${label}-${n}')`
const scripts: Script[] = [
  {
    name: 'explicit transaction with an extended-query sequence inside',
    commitsAfter: 7,
    steps: (label) => [
      { send: [msg.query('BEGIN')], until: 'Z' },
      { send: [msg.query(insert(label, 1))], until: 'Z' },
      { send: [msg.parse(insert(label, 2)), msg.bind()], until: null },
      { send: [msg.execute(), msg.flush()], until: 'C' },
      { send: [msg.sync()], until: 'Z' },
      { send: [msg.parse('select 1'), msg.bind(), msg.describePortal(), msg.flush()], until: 'T' },
      { send: [msg.execute(), msg.sync(), msg.query('COMMIT')], until: 'Z' },
    ],
  },
  {
    name: 'extended-query sequence in its implicit transaction',
    commitsAfter: 2,
    steps: (label) => [
      { send: [msg.parse(insert(label, 1)), msg.bind(), msg.execute(), msg.flush()], until: 'C' },
      { send: [msg.sync()], until: 'Z' },
    ],
  },
  {
    name: 'failed transaction',
    commitsAfter: Number.POSITIVE_INFINITY,
    steps: (label) => [
      { send: [msg.query('BEGIN')], until: 'Z' },
      { send: [msg.query(insert(label, 1))], until: 'Z' },
      { send: [msg.query('select 1/0')], until: 'Z' },
      { send: [msg.parse(insert(label, 2)), msg.bind(), msg.execute(), msg.sync()], until: 'Z' },
      { send: [msg.query('ROLLBACK')], until: 'Z' },
    ],
  },
]

async function play(client: WireClient, steps: Step[]): Promise<void> {
  for (const step of steps) {
    client.send(...step.send)
    if (step.until !== null) await client.until(step.until)
  }
}

describe('a client leaving at any point of its session gives back what it holds', () => {
  for (const script of scripts) {
    const length = script.steps('x').length
    for (let cut = 0; cut <= length; cut++) {
      for (const how of ['killed', 'terminating'] as const) {
        test(`${script.name}: ${how} after step ${cut} of ${length}`, async () => {
          const label = `${script.name.split(' ')[0]}-${cut}-${how}`
          const waiter = await WireClient.connect(path)
          const leaver = await WireClient.connect(path)
          await play(leaver, script.steps(label).slice(0, cut))
          // Another client asks for the lock meanwhile, and a third is still starting up.
          waiter.send(msg.query(insert(`${label}-waiter`, 1)))
          const starting = await WireClient.connect(path, { startup: false })
          starting.send(msg.startup())
          await Bun.sleep(10)
          if (how === 'killed') leaver.kill()
          else leaver.terminate()

          await within(waiter.until('Z'), 2_000, "the waiting client's query")
          await within(starting.until('Z'), 2_000, "the starting client's startup")
          expect(await starting.query('select 1')).toEqual({ status: 'I', error: null })
          starting.terminate()
          waiter.terminate()
          await settled()
          const kept = cut >= script.commitsAfter ? 1 : 0
          expect(await rows(`${label}-1`)).toBe(kept)
          expect(await rows(`${label}-waiter-1`)).toBe(1)
        })
      }
    }
  }
})

describe('a client leaving while it waits is dropped, and never takes the lock', () => {
  const ways = {
    'killed while its query waits': async (c: WireClient, label: string) => {
      c.send(msg.query(insert(label, 1)))
      await Bun.sleep(10)
      c.kill()
    },
    'terminating while its query waits (Terminate queued behind it)': async (
      c: WireClient,
      label: string,
    ) => {
      c.send(msg.query(insert(label, 1)))
      await Bun.sleep(10)
      c.terminate()
    },
    'terminating while idle (the reported wedge: its Terminate waited for the lock)': async (
      c: WireClient,
    ) => {
      c.terminate()
    },
    'killed with a half-sent extended-query sequence': async (c: WireClient, label: string) => {
      c.send(msg.parse(insert(label, 1)), msg.bind(), msg.execute())
      await Bun.sleep(10)
      c.kill()
    },
    'killed during its startup': async (_: WireClient, __: string, path: string) => {
      const starting = await WireClient.connect(path, { startup: false })
      starting.send(msg.startup())
      await Bun.sleep(10)
      starting.kill()
    },
  }
  for (const [name, leave] of Object.entries(ways)) {
    test(name, async () => {
      const label = `waiter-${name.split(' ').slice(0, 3).join('-')}`
      const holder = await WireClient.connect(path)
      const leaver = await WireClient.connect(path)
      expect(await holder.query('BEGIN')).toEqual({ status: 'T', error: null })
      expect((await holder.query(insert(`${label}-holder`, 1))).status).toBe('T')
      await leave(leaver, label, path)
      await Bun.sleep(20)
      // The holder's transaction goes on and commits; then the lock is free for everyone.
      expect((await holder.query(insert(`${label}-holder`, 2))).status).toBe('T')
      expect(await holder.query('COMMIT')).toEqual({ status: 'I', error: null })
      await settled()
      expect(await rows(`${label}-holder-1`)).toBe(1)
      expect(await rows(`${label}-holder-2`)).toBe(1)
      // A message of a client that left is not run after it left.
      expect(await rows(`${label}-1`)).toBe(0)
      const next = await within(WireClient.connect(path), 2_000, 'a new connection')
      expect(await next.query('select 1')).toEqual({ status: 'I', error: null })
      next.terminate()
      holder.terminate()
      await settled()
    })
  }
})

test("a socket client never runs inside the service's own transaction", async () => {
  const client = await WireClient.connect(path)
  const service = pglite.transaction(async (tx) => {
    await tx.query("insert into t values ('service-tx-1')")
    // The client's statements arrive while the service's transaction is open between its queries.
    client.send(msg.query("insert into t values ('client-during-service-tx'); COMMIT"))
    await Bun.sleep(50)
    await tx.query("insert into t values ('service-tx-2')")
    throw new Error('roll the service transaction back')
  })
  await expect(service).rejects.toThrow('roll the service transaction back')
  await within(client.until('Z'), 2_000, "the client's query")
  await settled()
  expect(await rows('service-tx-1')).toBe(0)
  expect(await rows('service-tx-2')).toBe(0)
  expect(await rows('client-during-service-tx')).toBe(1)
  client.terminate()
})

test('a client idle inside its transaction is disconnected and rolled back (watchdog)', async () => {
  const idle = await WireClient.connect(path)
  expect(await idle.query('BEGIN')).toEqual({ status: 'T', error: null })
  expect((await idle.query("insert into t values ('idle-in-tx')")).status).toBe('T')
  const started = Date.now()
  // The service waits for the lock meanwhile, and gets it once the idle client is cut off.
  await within(pglite.query('select 1'), IDLE_TIMEOUT_MS + 2_000, "the service's query")
  expect(Date.now() - started).toBeGreaterThanOrEqual(IDLE_TIMEOUT_MS - 50)
  await until(() => idle.closed, 'the idle client is disconnected')
  await settled()
  expect(await rows('idle-in-tx')).toBe(0)
})

test('pipelined messages of one client run in order, each answered once', async () => {
  const client = await WireClient.connect(path)
  const statements = Array.from({ length: 20 }, (_, i) =>
    msg.query(`insert into t values ('pipelined-${i}')`),
  )
  // All in one write, and then some more in separate writes before any answer is read.
  client.send(...statements.slice(0, 10))
  for (const statement of statements.slice(10)) client.send(statement)
  for (let i = 0; i < 20; i++) await client.until('Z')
  const order = await pglite.query<{ v: string }>("select v from t where v like 'pipelined-%' order by ctid")
  expect(order.rows.map((r) => r.v)).toEqual(statements.map((_, i) => `pipelined-${i}`))
  client.terminate()
  await settled()
})

test('COPY FROM STDIN is refused before it reaches PGlite (it would end PGlite’s session); COPY TO STDOUT works', async () => {
  const client = await WireClient.connect(path)
  const refused = await client.query('COPY t FROM STDIN')
  expect(refused.status).toBe('I')
  expect(refused.error).toContain('COPY FROM STDIN is not supported through the embedded database socket')
  expect(refused.error).toContain('0A000')
  // Inside a transaction the refusal fails it, as any error would.
  expect((await client.query('BEGIN')).status).toBe('T')
  expect((await client.query('/* bulk */ copy t (v) from stdin')).status).toBe('E')
  expect((await client.query('ROLLBACK')).status).toBe('I')
  // The extended protocol: refused at Execute.
  client.send(msg.parse('COPY t FROM STDIN', 'load'), msg.bind('', 'load'), msg.execute(), msg.sync())
  const extended = await client.until('Z')
  expect(extended.some((m) => m.type === 'E')).toBe(true)
  client.send(
    msg.query("insert into t values ('copied-out'); COPY (select v from t where v = 'copied-out') TO STDOUT"),
  )
  const out = await client.until('Z')
  expect(out.filter((m) => m.type === 'd').map((m) => new TextDecoder().decode(m.body))).toEqual([
    'copied-out\n',
  ])
  client.terminate()
  await settled()
})

test('a client sending an invalid message is cut off before PGlite sees it (PGlite would hang)', async () => {
  const holder = await WireClient.connect(path)
  const rogue = await WireClient.connect(path)
  expect((await holder.query('BEGIN')).status).toBe('T')
  rogue.send(new Uint8Array([0x7a, 0, 0, 0, 4]))
  const answer = await rogue.until('E')
  expect(new TextDecoder().decode(answer.at(-1)!.body)).toContain('invalid frontend message type 122')
  await until(() => rogue.closed, 'the rogue client is disconnected')
  // The holder's transaction was not disturbed; once it ends, the service runs.
  expect((await holder.query("insert into t values ('after-rogue')")).status).toBe('T')
  expect((await holder.query('COMMIT')).status).toBe('I')
  await settled()
  expect(await rows('after-rogue')).toBe(1)
  holder.terminate()
})

test('a long extended-query sequence without Sync is run as it comes (bounded memory), still atomically', async () => {
  // Its own server with the production idle limit: 400 ms is shorter than a busy machine may take
  // between two messages of a 1.3 MB sequence.
  const longPath = join(dir, 'long.sock')
  const longServer = socketServer(pglite, longPath)
  await longServer.start()
  const filler = 'x'.repeat(500)
  const sequence = (label: string) =>
    Array.from({ length: 2500 }, (_, i) => [
      msg.parse(`insert into t values ('${label}-${i}-${filler}')`),
      msg.bind(),
      msg.execute(),
    ]).flat()
  // Killed before its Sync: over 1 MiB of it has run, under the lock, and is rolled back.
  const killed = await WireClient.connect(longPath)
  killed.send(...sequence('long-killed'))
  await until(() => queueOf(longServer).state().holder !== null, 'the long sequence holds the lock')
  await killed.until('C')
  killed.kill()
  await until(() => queueOf(longServer).state().holder === null, 'the killed sequence is given back')
  await settled()
  expect(
    (await pglite.query<{ n: number }>("select count(*)::int as n from t where v like 'long-killed-%'"))
      .rows[0]!.n,
  ).toBe(0)
  // Completed with its Sync: every statement answered once, all committed.
  const whole = await WireClient.connect(longPath)
  whole.send(...sequence('long-whole'), msg.sync())
  const answers = await whole.until('Z', 20_000)
  expect(answers.filter((m) => m.type === 'C')).toHaveLength(2500)
  expect(
    (await pglite.query<{ n: number }>("select count(*)::int as n from t where v like 'long-whole-%'"))
      .rows[0]!.n,
  ).toBe(2500)
  whole.terminate()
  await longServer.stop()
  await settled()
})
