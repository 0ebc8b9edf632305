import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { AcceptInput, AcceptMessage } from '../../../domain/ingest/intake.ts'
import type { Logger } from '../../../domain/shared/logger.ts'
import { fail, ok } from '../../../domain/shared/result.ts'
import { pollMailbox } from '../../../infrastructure/mail/imap-poller.ts'
import { parseImapUrl } from '../../../infrastructure/mail/imap-url.ts'
import { type DovecotServer, startDovecot } from '../../support/dovecot.ts'

// A real Dovecot on a random port; the only stand-in is `accept`, the pipeline boundary, an
// in-memory function that obeys the AcceptMessage contract.

const KNOWN = 'rabcdefghijklmnop@reports.test'

function message(headers: Record<string, string>, body = 'report body\r\n'): string {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`)
  return `${[...lines, 'Subject: Report domain: example.com', 'MIME-Version: 1.0'].join('\r\n')}\r\n\r\n${body}`
}

function memoryLogger() {
  const lines: { level: string; msg: string; fields?: Record<string, unknown> }[] = []
  const at =
    (level: string) =>
    (msg: string, fields?: Record<string, unknown>): void => {
      lines.push({ level, msg, ...(fields ? { fields } : {}) })
    }
  const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
  return { logger, lines }
}

interface Call {
  input: AcceptInput
  raw: string
}

/** The accepted bytes, read while the call lasts (the poller spools, and discards after). */
async function bytesOf(raw: AcceptInput['raw']): Promise<Buffer> {
  if (raw instanceof Uint8Array) return Buffer.from(raw)
  return Buffer.concat(await Array.fromAsync(raw.pieces()))
}

/** Accepts KNOWN, refuses other recipients; `before` runs while the call is in flight. */
function pipeline(before?: (call: Call) => Promise<void>) {
  const calls: Call[] = []
  const accept: AcceptMessage = async (input) => {
    const call = { input, raw: (await bytesOf(input.raw)).toString('latin1') }
    calls.push(call)
    await before?.(call)
    if (input.recipient?.toLowerCase() !== KNOWN) return fail({ code: 'not_found', resource: 'recipient' })
    return ok({ id: `msg-${calls.length}`, accountId: 'acc-1' })
  }
  return { accept, calls }
}

describe('pollMailbox against Dovecot', () => {
  let dovecot: DovecotServer

  beforeAll(async () => {
    dovecot = await startDovecot(['mixed', 'flaky', 'batch', 'fixed', 'dated', 'large'])
  }, 15_000)

  afterAll(async () => {
    await dovecot?.stop()
  })

  test('archives accepted reports only after accept resolved, rejects unknown recipients and oversize mail', async () => {
    const report = message({ 'Delivered-To': KNOWN, To: 'dmarc@example.com', From: 'noreply@reporter.test' })
    const unknown = message({ To: 'Somebody <nobody@elsewhere.test>', From: 'noreply@reporter.test' })
    const oversize = message({ To: KNOWN }, `${'x'.repeat(76)}\r\n`.repeat(100))
    // A message someone already opened is still pending: the folder, not the \Seen flag, is the queue.
    await dovecot.append('mixed', 'INBOX', report, ['\\Seen'])
    await dovecot.append('mixed', 'INBOX', unknown)
    await dovecot.append('mixed', 'INBOX', oversize)

    // Where the message under accept is while accept runs, seen through a second IMAP session.
    const whileAccepting: { inbox: boolean; archived: boolean }[] = []
    const { accept, calls } = pipeline(async (call) => {
      whileAccepting.push({
        inbox: (await dovecot.messages('mixed', 'INBOX')).includes(call.raw),
        archived: (await dovecot.messages('mixed', 'Archive')).includes(call.raw),
      })
    })
    const { logger, lines } = memoryLogger()
    const result = await pollMailbox({ accept, logger }, { url: dovecot.url('mixed'), maxMessageBytes: 4096 })

    expect(result).toEqual({ fetched: 3, accepted: 1, rejected: 2, failed: 0 })
    expect(calls.map((c) => c.input.recipient)).toEqual([KNOWN, 'nobody@elsewhere.test'])
    expect(calls.map((c) => c.input.source)).toEqual(['imap', 'imap'])
    expect(calls[0]!.raw).toBe(report)
    expect(whileAccepting).toEqual([
      { inbox: true, archived: false },
      { inbox: true, archived: false },
    ])
    expect(await dovecot.messages('mixed', 'INBOX')).toEqual([])
    expect(await dovecot.messages('mixed', 'Archive')).toEqual([report])
    expect(await dovecot.messages('mixed', 'Rejected')).toEqual([unknown, oversize])
    const oversizeLine = lines.find((l) => l.msg.includes('over the size limit'))
    expect(oversizeLine?.level).toBe('warn')
    expect(oversizeLine?.fields?.limit).toBe(4096)
    expect(lines.some((l) => l.msg.includes('not_found'))).toBe(true)
  })

  test('the arrival handed to accept is the server’s INTERNALDATE, not the time of the poll', async () => {
    // A report delivered to the mailbox in March and polled only now (the poller was down, or the
    // mailbox is an old one being imported) arrived in March (docs/ingestion.md "Intake paths").
    const march = new Date('2026-03-01T08:30:00Z')
    const report = message({ 'Delivered-To': KNOWN, From: 'noreply@reporter.test' })
    await dovecot.append('dated', 'INBOX', report, [], march)
    const undated = message({ 'Delivered-To': KNOWN, 'Message-ID': '<now@reporter.test>' })
    await dovecot.append('dated', 'INBOX', undated)
    const { accept, calls } = pipeline()
    const before = Date.now()
    const result = await pollMailbox({ accept, logger: memoryLogger().logger }, { url: dovecot.url('dated') })
    expect(result).toMatchObject({ accepted: 2 })
    expect(calls[0]!.input.arrivedAt?.toISOString()).toBe(march.toISOString())
    // Appended just now: the server's clock, to the second (INTERNALDATE has no fraction).
    const appended = calls[1]!.input.arrivedAt!.getTime()
    expect(appended).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 60_000)
    expect(appended).toBeLessThanOrEqual(Date.now() + 1000)
  })

  test('when accept throws, the message stays in the folder, the poll stops, and the next poll picks it up', async () => {
    const first = message({ 'X-Original-To': KNOWN, 'Message-ID': '<one@reporter.test>' })
    const second = message({ To: `Reports <${KNOWN}>`, 'Message-ID': '<two@reporter.test>' })
    await dovecot.append('flaky', 'INBOX', first)
    await dovecot.append('flaky', 'INBOX', second)

    let attempts = 0
    const down: AcceptMessage = async () => {
      attempts++
      throw new Error('connection to the database refused')
    }
    const { logger, lines } = memoryLogger()
    const failed = await pollMailbox({ accept: down, logger }, { url: dovecot.url('flaky') })
    expect(failed).toMatchObject({ fetched: 1, accepted: 0, rejected: 0, failed: 1 })
    expect(failed.error).toContain('database refused')
    expect(attempts).toBe(1)
    expect(lines.some((l) => l.level === 'error' && l.msg.includes('will retry'))).toBe(true)
    expect(await dovecot.messages('flaky', 'INBOX')).toEqual([first, second])
    expect(await dovecot.messages('flaky', 'Archive')).toEqual([])

    const { accept, calls } = pipeline()
    const retried = await pollMailbox({ accept, logger }, { url: dovecot.url('flaky') })
    expect(retried).toEqual({ fetched: 2, accepted: 2, rejected: 0, failed: 0 })
    expect(calls.map((c) => c.raw)).toEqual([first, second])
    expect(await dovecot.messages('flaky', 'INBOX')).toEqual([])
    expect(await dovecot.messages('flaky', 'Archive')).toEqual([first, second])
  })

  test('takes at most maxMessages per poll, oldest first, into custom folders', async () => {
    const raws = [1, 2, 3].map((n) => message({ To: KNOWN, 'Message-ID': `<${n}@reporter.test>` }))
    for (const raw of raws) await dovecot.append('batch', 'INBOX', raw)
    const { accept, calls } = pipeline()
    const { logger } = memoryLogger()
    const mailbox = {
      url: dovecot.url('batch'),
      archiveFolder: 'Done',
      rejectedFolder: 'Refused',
      maxMessages: 2,
    }
    expect(await pollMailbox({ accept, logger }, mailbox)).toEqual({
      fetched: 2,
      accepted: 2,
      rejected: 0,
      failed: 0,
    })
    expect(calls.map((c) => c.raw)).toEqual(raws.slice(0, 2))
    expect(await dovecot.messages('batch', 'INBOX')).toEqual(raws.slice(2))
    expect(await pollMailbox({ accept, logger }, mailbox)).toEqual({
      fetched: 1,
      accepted: 1,
      rejected: 0,
      failed: 0,
    })
    expect(await dovecot.messages('batch', 'Done')).toEqual(raws)
    expect(await pollMailbox({ accept, logger }, mailbox)).toEqual({
      fetched: 0,
      accepted: 0,
      rejected: 0,
      failed: 0,
    })
  })

  test('a fixed recipient for the mailbox wins over the headers', async () => {
    const raw = message({ 'Delivered-To': 'someone@elsewhere.test' })
    await dovecot.append('fixed', 'INBOX', raw)
    const { accept, calls } = pipeline()
    const { logger } = memoryLogger()
    const result = await pollMailbox({ accept, logger }, { url: dovecot.url('fixed'), recipient: KNOWN })
    expect(result.accepted).toBe(1)
    expect(calls[0]!.input.recipient).toBe(KNOWN)
  })

  test('a message larger than one download window is spooled as it arrives and handed on byte for byte', async () => {
    // 3 MB in lines of every byte value from 0x20 up (8-bit ones too): four partial FETCH windows,
    // and more than a spool keeps in memory, so accept gets a spooled message, not one buffer.
    const line = Buffer.from(Array.from({ length: 224 }, (_, i) => i + 0x20)).toString('latin1')
    const raw = message({ 'Delivered-To': KNOWN }, `${line}\r\n`.repeat(15_000))
    expect(raw.length).toBeGreaterThan(3 * 1024 * 1024)
    await dovecot.append('large', 'INBOX', Buffer.from(raw, 'latin1'))
    const { accept, calls } = pipeline()
    const { logger } = memoryLogger()
    const result = await pollMailbox({ accept, logger }, { url: dovecot.url('large') })
    expect(result).toEqual({ fetched: 1, accepted: 1, rejected: 0, failed: 0 })
    const handed = calls[0]!.input.raw
    expect(handed).not.toBeInstanceOf(Uint8Array)
    expect(calls[0]!.raw === raw).toBe(true)
    expect(await dovecot.messages('large', 'Archive')).toHaveLength(1)
  })

  test('a wrong password or an unreachable server is a value and a log line, not a crash', async () => {
    const { accept, calls } = pipeline()
    const { logger, lines } = memoryLogger()
    const badPassword = dovecot.url('mixed').replace(/:[^:@]+@/, ':wrong@')
    const denied = await pollMailbox({ accept, logger }, { url: badPassword, timeoutMs: 5000 })
    expect(denied).toMatchObject({ fetched: 0, accepted: 0, rejected: 0, failed: 0 })
    expect(denied.error).toBeString()

    const closedPort = await pollMailbox(
      { accept, logger },
      { url: 'imap://u:p@127.0.0.1:1/INBOX', timeoutMs: 2000 },
    )
    expect(closedPort.error).toContain('127.0.0.1:1')
    expect(calls).toEqual([])
    expect(lines.filter((l) => l.msg === 'imap poll failed')).toHaveLength(2)
  })
})

describe('parseImapUrl', () => {
  test('reads host, port, TLS mode, credentials and folder', () => {
    expect(parseImapUrl('imaps://dmarc%40example.com:p%3Ass@mail.example.com/Reports%2FDMARC')).toEqual(
      ok({
        host: 'mail.example.com',
        port: 993,
        secure: true,
        user: 'dmarc@example.com',
        pass: 'p:ss',
        folder: 'Reports/DMARC',
      }),
    )
    expect(parseImapUrl('imap://u:p@[::1]:1143')).toEqual(
      ok({ host: '::1', port: 1143, secure: false, user: 'u', pass: 'p', folder: 'INBOX' }),
    )
  })

  test('refuses other schemes and URLs without a user', () => {
    expect(parseImapUrl('pop3://u:p@host/').ok).toBe(false)
    expect(parseImapUrl('imap://host/INBOX').ok).toBe(false)
    expect(parseImapUrl('not a url').ok).toBe(false)
  })
})
