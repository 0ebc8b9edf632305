import { describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spoolMessage } from '../../../infrastructure/mail/message-spool.ts'

// The intake's spool: small messages stay in memory, large ones go to a file read back in pieces;
// the cap refuses without keeping anything.

const MiB = 1024 * 1024

async function* inChunks(bytes: Uint8Array, size = 64 * 1024): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.byteLength; at += size) yield bytes.subarray(at, at + size)
}

function noise(size: number): Uint8Array {
  const bytes = new Uint8Array(size)
  for (let i = 0; i < size; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536))
  return bytes
}

const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher('sha256').update(bytes).digest('hex')

describe('spoolMessage', () => {
  test('a small message stays in memory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dw-spool-'))
    try {
      const bytes = noise(100_000)
      const result = await spoolMessage(inChunks(bytes), { maxBytes: 64 * MiB, dir })
      if (!result.ok) throw new Error('refused')
      expect(result.spool.size).toBe(100_000)
      expect(result.spool.sha256).toBe(sha256(bytes))
      expect(readdirSync(dir)).toEqual([])
      expect(Buffer.concat(await Array.fromAsync(result.spool.pieces())).equals(bytes)).toBe(true)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a large message goes to a file, reads back whole (more than once), and is removed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dw-spool-'))
    try {
      const bytes = noise(5 * MiB + 123)
      const result = await spoolMessage(inChunks(bytes), { maxBytes: 64 * MiB, dir })
      if (!result.ok) throw new Error('refused')
      expect(result.spool.sha256).toBe(sha256(bytes))
      expect(readdirSync(dir)).toHaveLength(1)
      for (let round = 0; round < 2; round++) {
        const pieces = await Array.fromAsync(result.spool.pieces())
        expect(Math.max(...pieces.map((piece) => piece.byteLength))).toBeLessThanOrEqual(MiB)
        expect(Buffer.concat(pieces).equals(bytes)).toBe(true)
      }
      await result.spool.discard()
      expect(readdirSync(dir)).toEqual([])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('over the cap: refused, nothing kept; with drain the source is read to its end', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dw-spool-'))
    try {
      const bytes = noise(3 * MiB)
      let read = 0
      async function* counted() {
        for await (const chunk of inChunks(bytes)) {
          read += chunk.byteLength
          yield chunk
        }
      }
      expect(await spoolMessage(counted(), { maxBytes: 2 * MiB, dir })).toMatchObject({ ok: false })
      expect(read).toBeLessThan(3 * MiB)
      expect(readdirSync(dir)).toEqual([])
      read = 0
      expect(await spoolMessage(counted(), { maxBytes: 2 * MiB, dir, drain: true })).toEqual({
        ok: false,
        size: 3 * MiB,
      })
      expect(read).toBe(3 * MiB)
      expect(readdirSync(dir)).toEqual([])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
