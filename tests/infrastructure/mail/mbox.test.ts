import { describe, expect, test } from 'bun:test'
import { type MboxMessage, splitMbox } from '../../../infrastructure/mail/mbox.ts'

const enc = new TextEncoder()
const dec = new TextDecoder()

async function* chunks(text: string, size: number) {
  const bytes = enc.encode(text)
  for (let at = 0; at < bytes.length; at += size) yield bytes.slice(at, at + size)
}

async function split(text: string, size = 1 << 16, max = 1 << 20): Promise<(string | number)[]> {
  const out: (string | number)[] = []
  for await (const m of splitMbox(chunks(text, size), max) as AsyncIterable<MboxMessage>)
    out.push(m.ok ? dec.decode(m.raw) : m.size)
  return out
}

const MBOX = [
  'From alice@example.org Mon Jan  1 00:00:00 2024',
  'From: alice@example.org',
  'Subject: one',
  '',
  '>From the start, a body line quoted as >From:',
  '>From here',
  '>>From there',
  '>not a from line',
  '',
  'From bob@example.org Tue Jan  2 00:00:00 2024',
  'From: bob@example.org',
  'Subject: two',
  '',
  'second body',
  '',
  '',
].join('\n')

describe('splitMbox', () => {
  test('splits at separator lines, drops them and the blank line before the next, unquotes mboxrd', async () => {
    const expected = [
      'From: alice@example.org\nSubject: one\n\nFrom the start, a body line quoted as >From:\nFrom here\n>From there\n>not a from line\n',
      'From: bob@example.org\nSubject: two\n\nsecond body\n',
    ]
    // Every chunk size, down to one byte, splits the same way.
    for (const size of [1, 2, 3, 7, 64, 1 << 16]) expect(await split(MBOX, size)).toEqual(expected)
  })

  test('CRLF files keep their line ends', async () => {
    const crlf =
      'From a Mon Jan  1 00:00:00 2024\r\nSubject: x\r\n\r\n>From y\r\n\r\nFrom b Mon Jan  1 00:00:00 2024\r\nSubject: z\r\n\r\nbody\r\n'
    expect(await split(crlf, 5)).toEqual(['Subject: x\r\n\r\nFrom y\r\n', 'Subject: z\r\n\r\nbody\r\n'])
  })

  test('a message over the limit is reported by size, and the next one still comes through', async () => {
    const big = `From a x\nSubject: big\n\n${'x'.repeat(5000)}\n\nFrom b x\nSubject: small\n\nok\n`
    const out = await split(big, 100, 1000)
    expect(out[0]).toBeGreaterThan(1000)
    expect(out[1]).toBe('Subject: small\n\nok\n')
  })

  test('a very long line is body, even if it starts like a separator', async () => {
    const long = `From a x\nSubject: long\n\n${'y'.repeat(200_000)}\nFrom b x\nSubject: after\n\n`
    const out = await split(long, 4096, 1 << 20)
    expect(out).toHaveLength(2)
    expect((out[0] as string).length).toBe('Subject: long\n\n'.length + 200_001)
  })
})
