import type { AddressInfo } from 'node:net'
import { type ParsedMail, simpleParser } from 'mailparser'
import { SMTPServer } from 'smtp-server'

// A receiving SMTP server on loopback for the notification mail tests (docs/notifications.md
// "Mail"): keeps every message as mailparser reads it (headers, HTML, text, attachments) with its
// envelope, and refuses the recipients in `refused` with a 550 at RCPT TO, as a mailbox that does
// not exist would be refused.

export interface ReceivedMail {
  to: string[]
  parsed: ParsedMail
  header(name: string): string
}

export interface SmtpReceiver {
  url: string
  mails: ReceivedMail[]
  /** Addresses refused with 550 at RCPT TO. */
  refused: Set<string>
  /** RCPT TO commands refused so far, by address. */
  refusals: string[]
  /** The mails to `to` so far. */
  to(address: string): ReceivedMail[]
  /** Waits until `count` mails to `address` arrived. */
  waitFor(address: string, count?: number, timeoutMs?: number): Promise<ReceivedMail[]>
  stop(): Promise<void>
}

/** A header's raw value, unfolded (mailparser turns List-* headers into objects; RFC 5322 §2.2.3). */
const headerText = (parsed: ParsedMail, name: string): string => {
  const line = parsed.headerLines.find((h) => h.key === name.toLowerCase())
  if (line === undefined) return ''
  return line.line
    .slice(line.line.indexOf(':') + 1)
    .replace(/\r?\n[ \t]+/g, ' ')
    .trim()
}

export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = []
  const refused = new Set<string>()
  const refusals: string[] = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (refused.has(address.address.toLowerCase())) {
        refusals.push(address.address.toLowerCase())
        const error = new Error('5.1.1 No such user here') as Error & { responseCode: number }
        error.responseCode = 550
        return callback(error)
      }
      callback()
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          mails.push({
            to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
            parsed,
            header: (name) => headerText(parsed, name),
          })
          callback()
        })
        .catch(callback)
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.server.address() as AddressInfo).port
  const to = (address: string) => mails.filter((m) => m.to.includes(address.toLowerCase()))
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    refused,
    refusals,
    to,
    async waitFor(address, count = 1, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs
      while (Date.now() < deadline) {
        if (to(address).length >= count) return to(address)
        await Bun.sleep(100)
      }
      throw new Error(`${to(address).length} of ${count} mails to ${address} within ${timeoutMs} ms`)
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
