import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AcceptInput, AcceptMessage, KnowsRecipient } from '../../../domain/ingest/intake.ts'
import type { Logger } from '../../../domain/shared/logger.ts'
import { fail, ok } from '../../../domain/shared/result.ts'
import { type SmtpListener, startSmtpListener } from '../../../infrastructure/mail/smtp-listener.ts'
import { type SmtpClient, smtpConnect } from '../../support/smtp-client.ts'

// Real listeners on random ports, driven over TCP by a minimal wire-level client. The only
// stand-ins are the pipeline boundary (`accept`, `knowsRecipient`): in-memory functions that obey
// their contracts. Recipients' local parts choose what the pipeline does with them.

const LIMIT = 4096

function rcpt(local: string): string {
  return `${local}@reports.test`
}

const calls: (AcceptInput & { raw: Uint8Array })[] = []

/** The accepted bytes, read while the call lasts (the listener spools and discards after). */
async function bytesOf(raw: AcceptInput['raw']): Promise<Uint8Array> {
  if (raw instanceof Uint8Array) return raw
  return Buffer.concat(await Array.fromAsync(raw.pieces()))
}
let gate: Promise<void> | null = null
const logged: { level: string; msg: string }[] = []

const accept: AcceptMessage = async (input) => {
  calls.push({ ...input, raw: await bytesOf(input.raw) })
  if (gate) await gate
  const local = input.recipient?.split('@')[0]
  if (local === 'dbdown') throw new Error('database unavailable')
  if (local === 'gone') return fail({ code: 'not_found', resource: 'recipient' })
  if (local === 'small') return fail({ code: 'payload_too_large', limit: 10 })
  return ok({ id: `m${calls.length}`, accountId: `acc-${local}` })
}

const knowsRecipient: KnowsRecipient = async (address) => {
  if (address === rcpt('checkdown')) throw new Error('database unavailable')
  return address.endsWith('@reports.test') && !address.startsWith('nobody@')
}

const logger: Logger = Object.fromEntries(
  ['debug', 'info', 'warn', 'error'].map((level) => [level, (msg: string) => logged.push({ level, msg })]),
) as unknown as Logger

let smtp: SmtpListener
let lmtp: SmtpListener
let idle: SmtpListener
let secure: SmtpListener
let dir: string
let cert: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dw-smtp-tls-'))
  const openssl = Bun.spawnSync(
    ['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=mx.reports.test']
      .concat(['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')])
      .concat(['-addext', 'subjectAltName=DNS:mx.reports.test']),
  )
  expect(openssl.exitCode).toBe(0)
  cert = readFileSync(join(dir, 'cert.pem'), 'utf8')
  const deps = { accept, knowsRecipient, logger }
  const base = {
    ...{ host: '127.0.0.1', port: 0, maxMessageBytes: LIMIT, hostname: 'mx.reports.test' },
    domain: 'reports.test',
  }
  smtp = await startSmtpListener(deps, { ...base, lmtp: false })
  lmtp = await startSmtpListener(deps, { ...base, lmtp: true })
  idle = await startSmtpListener(deps, { ...base, lmtp: false, idleTimeoutMs: 300 })
  const tls = { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert }
  secure = await startSmtpListener(deps, { ...base, lmtp: false, tls })
})

afterAll(async () => {
  await Promise.all([smtp?.close(), lmtp?.close(), idle?.close(), secure?.close()])
  if (dir) rmSync(dir, { recursive: true, force: true })
})

async function open(port: number, lmtpMode = false): Promise<SmtpClient> {
  const client = await smtpConnect(port)
  expect(client.greeting.code).toBe(220)
  expect((await client.command(`${lmtpMode ? 'LHLO' : 'EHLO'} reporter.test`)).code).toBe(250)
  return client
}

async function envelope(client: SmtpClient, recipients: string[]): Promise<number[]> {
  expect((await client.command('MAIL FROM:<noreply@reporter.test>')).code).toBe(250)
  const codes: number[] = []
  for (const to of recipients) codes.push((await client.command(`RCPT TO:<${to}>`)).code)
  return codes
}

const REPORT = Buffer.concat([
  Buffer.from('From: noreply@reporter.test\r\nTo: dmarc@example.com\r\nSubject: Report\r\n\r\n'),
  // A line that starts with a dot (stuffed on the wire) and 8-bit bytes must arrive unchanged.
  Buffer.from('.leading dot\r\n..two dots\r\nnaïve UTF-8 \u2713\r\n.\tdot tab\r\nlast line\r\n'),
])

describe('SMTP listener', () => {
  test('accepts a report for a known recipient, with the exact bytes, and says 250 only after accept resolved', async () => {
    calls.length = 0
    const client = await open(smtp.port)
    const ehlo = await client.command('EHLO again.reporter.test')
    expect(ehlo.lines.some((l) => l.includes(`SIZE ${LIMIT}`))).toBe(true)
    expect(ehlo.lines.some((l) => /AUTH|STARTTLS/.test(l))).toBe(false)
    expect(await envelope(client, [rcpt('acme')])).toEqual([250])
    expect((await client.command('DATA')).code).toBe(354)

    let release = () => {}
    gate = new Promise((resolve) => {
      release = resolve
    })
    client.sendData(REPORT)
    while (calls.length === 0) await Bun.sleep(5)
    await Bun.sleep(100)
    expect(client.pending()).toBe(false)
    release()
    gate = null
    const done = await client.reply()
    expect(done.code).toBe(250)
    expect(done.text).toContain('m1')

    expect(calls).toHaveLength(1)
    expect(calls[0]!.recipient).toBe(rcpt('acme'))
    expect(calls[0]!.source).toBe('smtp')
    expect(Buffer.from(calls[0]!.raw).equals(REPORT)).toBe(true)
    expect((await client.command('QUIT')).code).toBe(221)
    await client.closed
  })

  test('refuses unknown recipients at RCPT TO with 550, and says 451 when the check itself fails', async () => {
    calls.length = 0
    const client = await open(smtp.port)
    expect(await envelope(client, [rcpt('nobody'), 'dmarc@elsewhere.test', rcpt('checkdown')])).toEqual([
      550, 550, 451,
    ])
    expect((await client.command('DATA')).code).toBe(503)
    expect(calls).toEqual([])
    client.destroy()
  })

  test('takes mail for the postmaster (RFC 5321 §4.5.1), logs it and keeps nothing', async () => {
    calls.length = 0
    logged.length = 0
    const client = await open(smtp.port)
    expect(await envelope(client, ['Postmaster', 'POSTMASTER@reports.test'])).toEqual([250, 250])
    expect((await client.command('DATA')).code).toBe(354)
    client.sendData(REPORT)
    const answer = await client.reply()
    expect(answer.code).toBe(250)
    expect(answer.text).toContain('postmaster message logged')
    expect(calls).toEqual([])
    expect(logged.filter((l) => l.msg.includes('postmaster'))).toHaveLength(2)
    // Beside a report address, the report is accepted as ever, and one refused for good bounces.
    expect(await envelope(client, ['postmaster', rcpt('acme')])).toEqual([250, 250])
    expect((await client.command('DATA')).code).toBe(354)
    client.sendData(REPORT)
    expect((await client.reply()).text).toContain('accepted as')
    expect(calls.map((c) => c.recipient)).toEqual([rcpt('acme')])
    expect(await envelope(client, ['postmaster', rcpt('gone')])).toEqual([250, 250])
    expect((await client.command('DATA')).code).toBe(354)
    client.sendData(REPORT)
    expect((await client.reply()).code).toBe(550)
    // Only the postmaster of the domain served: another domain's is no report address here.
    await client.command('RSET')
    expect(await envelope(client, ['postmaster@elsewhere.test'])).toEqual([550])
    expect((await client.command('QUIT')).code).toBe(221)
  })

  test('refuses an oversize message with 552, announced by SIZE or not, without calling accept', async () => {
    calls.length = 0
    const client = await open(smtp.port)
    expect((await client.command(`MAIL FROM:<noreply@reporter.test> SIZE=${LIMIT + 1}`)).code).toBe(552)
    await client.command('RSET')
    expect(await envelope(client, [rcpt('acme')])).toEqual([250])
    expect((await client.command('DATA')).code).toBe(354)
    client.sendData(`Subject: big\r\n\r\n${'y'.repeat(78)}\r\n`.repeat(100))
    expect((await client.reply()).code).toBe(552)
    expect(calls).toEqual([])
    // The session goes on: the next message on the same connection is accepted.
    expect(await envelope(client, [rcpt('acme')])).toEqual([250])
    expect((await client.command('DATA')).code).toBe(354)
    client.sendData(REPORT)
    expect((await client.reply()).code).toBe(250)
    client.destroy()
  })

  test('answers 451 when accept throws, and 550/552 for permanent refusals', async () => {
    const client = await open(smtp.port)
    for (const [local, code] of [
      ['dbdown', 451],
      ['gone', 550],
      ['small', 552],
    ] as const) {
      expect(await envelope(client, [rcpt(local)])).toEqual([250])
      expect((await client.command('DATA')).code).toBe(354)
      client.sendData(REPORT)
      expect((await client.reply()).code).toBe(code)
    }
    // With several recipients, one temporary failure makes the whole message 451 (retried as a whole).
    expect(await envelope(client, [rcpt('acme'), rcpt('dbdown')])).toEqual([250, 250])
    expect((await client.command('DATA')).code).toBe(354)
    client.sendData(REPORT)
    expect((await client.reply()).code).toBe(451)
    client.destroy()
  })

  test('survives a client that disconnects mid-DATA and one that sends garbage', async () => {
    calls.length = 0
    const quitter = await open(smtp.port)
    expect(await envelope(quitter, [rcpt('acme')])).toEqual([250])
    expect((await quitter.command('DATA')).code).toBe(354)
    quitter.write('Subject: half a message\r\n\r\nand then')
    await Bun.sleep(20)
    quitter.destroy()

    const noisy = await smtpConnect(smtp.port)
    noisy.write(Buffer.from([0, 255, 13, 10, 0x80, 0x81, 13, 10]))
    noisy.write(`${'A'.repeat(70_000)}\r\n`)
    const answers = [await noisy.reply(), await noisy.reply(), await noisy.reply()]
    expect(answers.map((a) => a.code)).toEqual([500, 500, 421])
    await noisy.closed

    await Bun.sleep(50)
    expect(calls).toEqual([])
    const client = await open(smtp.port)
    expect(await envelope(client, [rcpt('acme')])).toEqual([250])
    expect((await client.command('DATA')).code).toBe(354)
    client.sendData(REPORT)
    expect((await client.reply()).code).toBe(250)
    expect(calls).toHaveLength(1)
    client.destroy()
  })

  test('offers STARTTLS with the configured certificate, and no AUTH before or after it', async () => {
    calls.length = 0
    const client = await open(secure.port)
    const before = await client.command('EHLO reporter.test')
    expect(before.lines.some((l) => l.includes('STARTTLS'))).toBe(true)
    expect(before.lines.some((l) => l.includes('AUTH'))).toBe(false)
    expect((await client.startTls(cert, 'mx.reports.test')).code).toBe(220)
    const after = await client.command('EHLO reporter.test')
    expect(after.lines.some((l) => /AUTH|STARTTLS/.test(l))).toBe(false)
    expect((await client.command('AUTH PLAIN AGZvbwBiYXI=')).code).toBeGreaterThanOrEqual(500)
    expect(await envelope(client, [rcpt('acme')])).toEqual([250])
    expect((await client.command('DATA')).code).toBe(354)
    client.sendData(REPORT)
    expect((await client.reply()).code).toBe(250)
    expect(Buffer.from(calls[0]!.raw).equals(REPORT)).toBe(true)
    expect((await client.command('QUIT')).code).toBe(221)
  })

  test('closes an idle connection after the timeout', async () => {
    const client = await open(idle.port)
    const started = Date.now()
    const notice = await client.reply(3000)
    expect(notice.code).toBe(421)
    await client.closed
    expect(Date.now() - started).toBeLessThan(2000)
  })
})

describe('LMTP listener', () => {
  test('answers each recipient on its own after DATA, in RCPT order', async () => {
    calls.length = 0
    const client = await smtpConnect(lmtp.port)
    expect(client.greeting.text).toContain('LMTP')
    expect((await client.command('EHLO reporter.test')).code).toBe(500)
    expect((await client.command('LHLO reporter.test')).code).toBe(250)
    const recipients = [
      rcpt('acme'),
      rcpt('nobody'),
      rcpt('dbdown'),
      rcpt('gone'),
      rcpt('small'),
      rcpt('beta'),
    ]
    expect(await envelope(client, recipients)).toEqual([250, 550, 250, 250, 250, 250])
    expect((await client.command('DATA')).code).toBe(354)
    client.sendData(REPORT)
    const codes: number[] = []
    for (let i = 0; i < 5; i++) codes.push((await client.reply()).code)
    expect(codes).toEqual([250, 451, 550, 552, 250])
    expect(calls.map((c) => c.recipient)).toEqual([
      rcpt('acme'),
      rcpt('dbdown'),
      rcpt('gone'),
      rcpt('small'),
      rcpt('beta'),
    ])
    expect(calls.every((c) => Buffer.from(c.raw).equals(REPORT))).toBe(true)

    // An oversize message gets one 552 per recipient.
    expect(await envelope(client, [rcpt('acme'), rcpt('beta')])).toEqual([250, 250])
    expect((await client.command('DATA')).code).toBe(354)
    client.sendData('x'.repeat(LIMIT + 10))
    expect([(await client.reply()).code, (await client.reply()).code]).toEqual([552, 552])
    expect((await client.command('QUIT')).code).toBe(221)
  })
})

describe('connections per address', () => {
  test('one address gets at most its share; a closed connection frees its place', async () => {
    const capped = await startSmtpListener(
      { accept, knowsRecipient, logger },
      { host: '127.0.0.1', port: 0, maxMessageBytes: LIMIT, lmtp: false, maxClientsPerAddress: 3 },
    )
    try {
      const held = await Promise.all([1, 2, 3].map(() => smtpConnect(capped.port)))
      for (const client of held) expect(client.greeting.code).toBe(220)
      // The fourth from the same address is told to come back later, and closed.
      const refused = await smtpConnect(capped.port)
      expect(refused.greeting.code).toBe(421)
      await refused.closed
      held[0]!.destroy()
      await held[0]!.closed
      await Bun.sleep(50)
      const again = await smtpConnect(capped.port)
      expect(again.greeting.code).toBe(220)
      for (const client of [...held.slice(1), again]) client.destroy()
    } finally {
      await capped.close()
    }
  })
})

describe('a session deadline', () => {
  test('a client that keeps the connection busy is closed with 421 at the deadline, mid-DATA too', async () => {
    calls.length = 0
    const bounded = await startSmtpListener(
      { accept, knowsRecipient, logger },
      { host: '127.0.0.1', port: 0, maxMessageBytes: LIMIT, lmtp: false, sessionTimeoutMs: 600 },
    )
    try {
      // Commands more often than any idle timeout would notice.
      const chatty = await open(bounded.port)
      const started = Date.now()
      let code = 250
      while (code === 250 && Date.now() - started < 3000) {
        await Bun.sleep(50)
        code = (await chatty.command('NOOP')).code
      }
      expect(code).toBe(421)
      await chatty.closed
      expect(Date.now() - started).toBeLessThan(2000)

      // A message trickled a byte at a time never completes, and nothing is accepted.
      const trickle = await open(bounded.port)
      expect(await envelope(trickle, [rcpt('acme')])).toEqual([250])
      expect((await trickle.command('DATA')).code).toBe(354)
      const timer = setInterval(() => trickle.write('x'), 50)
      try {
        expect((await trickle.reply(3000)).code).toBe(421)
        await trickle.closed
      } finally {
        clearInterval(timer)
      }
      expect(calls).toHaveLength(0)

      // A session that ends in time is not touched by its deadline.
      const quick = await open(bounded.port)
      expect(await envelope(quick, [rcpt('acme')])).toEqual([250])
      expect((await quick.command('DATA')).code).toBe(354)
      quick.sendData(REPORT)
      expect((await quick.reply()).code).toBe(250)
      expect((await quick.command('QUIT')).code).toBe(221)
      expect(calls).toHaveLength(1)
    } finally {
      await bounded.close()
    }
  })
})
