import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AcceptInput, AcceptMessage } from '../../../domain/ingest/intake.ts'
import type { Logger } from '../../../domain/shared/logger.ts'
import { fail, ok } from '../../../domain/shared/result.ts'
import { handOff, type IntakeSocket, serveIntakeSocket } from '../../../infrastructure/mail/intake-socket.ts'

// The CLI pipe's hand-off over a real Unix socket. The only stand-in is the pipeline boundary
// (`accept`), an in-memory function that obeys its contract; recipients' local parts choose what it
// does (as in smtp-listener.test.ts).

const LIMIT = 4096
const dir = mkdtempSync(join(tmpdir(), 'dw-intake-'))
const path = join(dir, 'intake.sock')
const calls: AcceptInput[] = []
const logged: string[] = []
// The service hands accept a spool (never the message whole, docs/ingestion.md "Memory"): read back
// here, while it lives, as the real accept stores it.
const spooledKinds: boolean[] = []
const accept: AcceptMessage = async (input) => {
  spooledKinds.push(!(input.raw instanceof Uint8Array))
  const raw =
    input.raw instanceof Uint8Array ? input.raw : Buffer.concat(await Array.fromAsync(input.raw.pieces()))
  calls.push({ ...input, raw: new Uint8Array(raw) })
  const local = input.recipient?.split('@')[0]
  if (local === 'dbdown') throw new Error('database unavailable')
  if (local === 'gone' || input.recipient === null) return fail({ code: 'not_found', resource: 'recipient' })
  return ok({ id: `m${calls.length}`, accountId: `acc-${local}` })
}
const logger = Object.fromEntries(
  ['debug', 'info', 'warn', 'error'].map((level) => [level, (msg: string) => logged.push(`${level} ${msg}`)]),
) as unknown as Logger
let socket: IntakeSocket

beforeAll(async () => {
  // A socket file left by a killed service is replaced.
  writeFileSync(path, '')
  socket = await serveIntakeSocket({ accept, logger }, { path, maxMessageBytes: LIMIT })
})
afterAll(async () => {
  await socket.close()
  rmSync(dir, { recursive: true, force: true })
})

const send = (recipient: string | null, raw: Uint8Array | string) =>
  handOff(
    path,
    { raw: typeof raw === 'string' ? new TextEncoder().encode(raw) : raw, recipient },
    { maxMessageBytes: LIMIT },
  )

test('a message is stored by the service, with its exact bytes and recipient, from the cli source', async () => {
  const raw = new Uint8Array([...new TextEncoder().encode('Subject: r\r\n\r\n'), 0, 255, 13, 10])
  const id = `m${calls.length + 1}`
  expect(await send('r1@reports.test', raw)).toEqual({ outcome: 'accepted', id })
  const call = calls.at(-1)!
  expect(call).toEqual({ raw: expect.any(Uint8Array), recipient: 'r1@reports.test', source: 'cli' })
  expect([...(call.raw as Uint8Array)]).toEqual([...raw])
  expect(spooledKinds.at(-1)).toBe(true)
  // Only the owner may connect (DATA_DIR is 0700 as well).
  expect(statSync(path).mode & 0o777).toBe(0o600)
})

test('refusals come back as failures; nothing over the limit reaches accept', async () => {
  expect(await send('gone@reports.test', 'x')).toEqual({
    outcome: 'refused',
    failure: { code: 'not_found', resource: 'recipient' },
  })
  expect(await send(null, 'x')).toMatchObject({ outcome: 'refused', failure: { code: 'not_found' } })
  const before = calls.length
  expect(await send('big@reports.test', new Uint8Array(LIMIT + 1))).toEqual({
    outcome: 'refused',
    failure: { code: 'payload_too_large', limit: LIMIT },
  })
  expect(await send('huge@reports.test', new Uint8Array(LIMIT + 2 * 1024 * 1024))).toEqual({
    outcome: 'refused',
    failure: { code: 'payload_too_large', limit: LIMIT },
  })
  expect(calls.length).toBe(before)
})

test('a storage failure is "not stored" (the mail server retries), and logged', async () => {
  expect(await send('dbdown@reports.test', 'x')).toEqual({
    outcome: 'not_stored',
    reason: 'the service answered 503',
  })
  expect(logged.some((line) => line.startsWith('error intake socket'))).toBe(true)
})

test('no service: no socket file, or a file nothing listens on', async () => {
  expect(
    await handOff(
      join(dir, 'absent.sock'),
      { raw: new Uint8Array(1), recipient: 'a@b' },
      { maxMessageBytes: 1 },
    ),
  ).toEqual({
    outcome: 'no_service',
  })
  const stale = join(dir, 'stale.sock')
  writeFileSync(stale, '')
  expect(await handOff(stale, { raw: new Uint8Array(1), recipient: 'a@b' }, { maxMessageBytes: 1 })).toEqual({
    outcome: 'no_service',
  })
})

test('many hand-offs at once are all answered', async () => {
  const results = await Promise.all(
    Array.from({ length: 40 }, (_, i) => send(`burst${i}@reports.test`, `m ${i}`)),
  )
  expect(results.every((r) => r.outcome === 'accepted')).toBe(true)
  expect(new Set(results.map((r) => (r.outcome === 'accepted' ? r.id : ''))).size).toBe(40)
})
