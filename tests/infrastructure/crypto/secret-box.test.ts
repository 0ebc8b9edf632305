import { expect, test } from 'bun:test'
import { mkdtemp, readFile, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { keyFromFile, parseSecretKey, secretBox } from '../../../infrastructure/crypto/secret-box.ts'

const key = new Uint8Array(32).map((_, i) => i)

test('a sealed secret opens with the same key and context, and is not the plaintext', async () => {
  const box = await secretBox(key)
  const sealed = await box.seal('whsec_abc', 'webhook:1')
  expect(sealed).toStartWith('v1.')
  expect(sealed).not.toContain('whsec_abc')
  expect(await box.open(sealed, 'webhook:1')).toBe('whsec_abc')
  // Random IVs: sealing twice gives two different texts.
  expect(await box.seal('whsec_abc', 'webhook:1')).not.toBe(sealed)
})

test('another context, another key or a tampered value does not open', async () => {
  const box = await secretBox(key)
  const sealed = await box.seal('token', 'provider:1')
  await expect(box.open(sealed, 'provider:2')).rejects.toThrow()
  const other = await secretBox(new Uint8Array(32).fill(7))
  await expect(other.open(sealed, 'provider:1')).rejects.toThrow()
  const flipped = `${sealed.slice(0, -2)}${sealed.endsWith('A') ? 'B' : 'A'}${sealed.slice(-1)}`
  await expect(box.open(flipped, 'provider:1')).rejects.toThrow()
  await expect(box.open('plain', 'provider:1')).rejects.toThrow('not a sealed secret')
})

test('SECRET_KEY is 64 hex characters or base64 of 32 bytes', () => {
  expect(parseSecretKey('00'.repeat(32))).toHaveLength(32)
  expect(parseSecretKey(Buffer.from(key).toString('base64'))).toEqual(key)
  expect(parseSecretKey('short')).toBeNull()
  expect(parseSecretKey(Buffer.from(key).toString('base64url'))).toEqual(key)
  // Characters outside the alphabet were skipped: another key than the one written.
  expect(parseSecretKey(`!!${Buffer.from(key).toString('base64')}`)).toBeNull()
  expect(
    parseSecretKey(
      `${Buffer.from(key).toString('base64').slice(0, 20)} ${Buffer.from(key).toString('base64').slice(20)}`,
    ),
  ).toBeNull()
})

test('the embedded key file is created once with mode 0600 and read back after', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'dw-key-'))
  const path = join(dir, 'data', 'secret.key')
  const first = await keyFromFile(path)
  expect((await stat(path)).mode & 0o777).toBe(0o600)
  expect(await keyFromFile(path)).toEqual(first)
  expect((await readFile(path, 'utf8')).trim()).toHaveLength(64)
  // Two processes racing: both end with the same key.
  const dir2 = await mkdtemp(join(tmpdir(), 'dw-key-'))
  const racing = await Promise.all([keyFromFile(join(dir2, 'k')), keyFromFile(join(dir2, 'k'))])
  expect(racing[0]).toEqual(racing[1])
})
