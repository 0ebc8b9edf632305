import type { AddressInfo } from 'node:net'
import { simpleParser } from 'mailparser'
import { SMTPServer } from 'smtp-server'

// A local SMTP server that keeps what it is sent: the outgoing mail tests read their mail here.

export interface SunkMail {
  from: string
  to: string[]
  subject: string
  text: string
}

export interface SmtpSink {
  port: number
  url: string
  mails: SunkMail[]
  /** Resolves with the next mail to `to` (already received or still to come). */
  next(to: string, timeoutMs?: number): Promise<SunkMail>
  stop(): Promise<void>
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const mails: SunkMail[] = []
  const waiters: { to: string; resolve: (mail: SunkMail) => void }[] = []
  const taken = new Set<SunkMail>()
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          const mail: SunkMail = {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
          }
          mails.push(mail)
          const waiter = waiters.findIndex((w) => mail.to.includes(w.to))
          if (waiter >= 0) {
            taken.add(mail)
            waiters.splice(waiter, 1)[0]!.resolve(mail)
          }
          callback()
        })
        .catch(callback)
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.server.address() as AddressInfo).port
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    mails,
    next(to, timeoutMs = 10_000) {
      const ready = mails.find((mail) => mail.to.includes(to) && !taken.has(mail))
      if (ready) {
        taken.add(ready)
        return Promise.resolve(ready)
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no mail to ${to} within ${timeoutMs} ms`)),
          timeoutMs,
        )
        waiters.push({
          to,
          resolve: (mail) => {
            clearTimeout(timer)
            resolve(mail)
          },
        })
      })
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
