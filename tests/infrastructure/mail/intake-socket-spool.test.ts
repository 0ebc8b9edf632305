import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AcceptInput, AcceptMessage } from '../../../domain/ingest/intake.ts'
import type { Logger } from '../../../domain/shared/logger.ts'
import { ok } from '../../../domain/shared/result.ts'
import { handOff, type IntakeSocket, serveIntakeSocket } from '../../../infrastructure/mail/intake-socket.ts'
import { spoolMessage } from '../../../infrastructure/mail/message-spool.ts'

// The CLI pipe hands its spooled stdin to the service as it reads it back (src/cli-ingest.ts): the
// service gets the exact bytes, and refuses one over its limit as before. `accept` is the only
// stand-in, as in intake-socket.test.ts.

const MiB = 1024 * 1024
const LIMIT = 4 * MiB
const dir = mkdtempSync(join(tmpdir(), 'dw-intake-spool-'))
const path = join(dir, 'intake.sock')
const received: Uint8Array[] = []
const accept: AcceptMessage = async (input: AcceptInput) => {
  // A spool, read back while it lives, as the real accept stores it.
  const raw =
    input.raw instanceof Uint8Array ? input.raw : Buffer.concat(await Array.fromAsync(input.raw.pieces()))
  received.push(new Uint8Array(raw))
  return ok({ id: `m${received.length}`, accountId: 'acc' })
}
const logger = Object.fromEntries(
  ['debug', 'info', 'warn', 'error'].map((level) => [level, () => {}]),
) as unknown as Logger
let socket: IntakeSocket

beforeAll(async () => {
  socket = await serveIntakeSocket({ accept, logger }, { path, maxMessageBytes: LIMIT })
})
afterAll(async () => {
  await socket.close()
  rmSync(dir, { recursive: true, force: true })
})

async function spooled(bytes: Uint8Array) {
  async function* chunks() {
    for (let at = 0; at < bytes.byteLength; at += 64 * 1024) yield bytes.subarray(at, at + 64 * 1024)
  }
  const result = await spoolMessage(chunks(), { maxBytes: 64 * MiB, dir })
  if (!result.ok) throw new Error('refused')
  return result.spool
}

test('a spooled message larger than its memory part arrives byte for byte', async () => {
  const bytes = new Uint8Array(3 * MiB + 5)
  crypto.getRandomValues(bytes.subarray(0, 65536))
  bytes.set(new TextEncoder().encode('Subject: spooled\r\n\r\n'))
  const spool = await spooled(bytes)
  try {
    const answer = await handOff(
      path,
      { raw: spool, recipient: 'r@reports.test' },
      { maxMessageBytes: LIMIT },
    )
    expect(answer).toEqual({ outcome: 'accepted', id: `m${received.length}` })
    expect(Buffer.from(received.at(-1)!).equals(bytes)).toBe(true)
  } finally {
    await spool.discard()
  }
})

test('a spooled message over the service’s limit is refused, not accepted', async () => {
  const before = received.length
  const spool = await spooled(new Uint8Array(LIMIT + 1))
  try {
    expect(
      await handOff(path, { raw: spool, recipient: 'r@reports.test' }, { maxMessageBytes: LIMIT }),
    ).toEqual({
      outcome: 'refused',
      failure: { code: 'payload_too_large', limit: LIMIT },
    })
    expect(received.length).toBe(before)
  } finally {
    await spool.discard()
  }
})
