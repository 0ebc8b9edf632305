// A deliberately small SMTP/LMTP client over node:net for the listener tests: it speaks the wire
// protocol byte for byte (dot-stuffing included), so tests see exactly what a sending MTA sees,
// and it can misbehave (stop mid-DATA, send garbage) the way real clients do.

import { connect, type Socket } from 'node:net'
import { connect as tlsConnect } from 'node:tls'

export interface Reply {
  code: number
  lines: string[]
  text: string
}

export interface SmtpClient {
  greeting: Reply
  /** Sends one command line and waits for its reply. */
  command(line: string): Promise<Reply>
  /** Waits for the next reply (e.g. the per-recipient replies of LMTP after DATA). */
  reply(timeoutMs?: number): Promise<Reply>
  /** Sends the message dot-stuffed and terminated with CRLF.CRLF; the caller reads the replies. */
  sendData(raw: Uint8Array | string): void
  /** Sends STARTTLS and, on 220, continues over TLS trusting `ca` for `servername`. */
  startTls(ca: string, servername: string): Promise<Reply>
  /** Writes raw bytes as they are (for misbehaving clients). */
  write(bytes: Uint8Array | string): void
  /** Whether bytes arrived that no reply() has consumed. */
  pending(): boolean
  closed: Promise<void>
  destroy(): void
}

/** RFC 5321 §4.5.2: a line starting with a dot gets another dot; the message ends with CRLF. */
export function dotStuff(raw: Uint8Array | string): Buffer {
  const text = Buffer.from(raw).toString('latin1')
  const stuffed = text.replace(/(^|\r\n)\./g, '$1..')
  const terminated = stuffed.endsWith('\r\n') ? stuffed : `${stuffed}\r\n`
  return Buffer.from(`${terminated}.\r\n`, 'latin1')
}

export async function smtpConnect(port: number, host = '127.0.0.1'): Promise<SmtpClient> {
  let socket: Socket = connect(port, host)
  let buffer = ''
  const replies: Reply[] = []
  const waiters: ((reply: Reply) => void)[] = []
  let current: string[] = []
  const onData = (chunk: Buffer) => {
    buffer += chunk.toString('latin1')
    let newline = buffer.indexOf('\r\n')
    while (newline >= 0) {
      const line = buffer.slice(0, newline)
      buffer = buffer.slice(newline + 2)
      current.push(line)
      // The last line of a (multi-line) reply has a space after the code, the others a dash.
      if (/^\d{3}( |$)/.test(line)) {
        const reply = { code: Number(line.slice(0, 3)), lines: current, text: current.join('\n') }
        current = []
        const waiter = waiters.shift()
        if (waiter) waiter(reply)
        else replies.push(reply)
      }
      newline = buffer.indexOf('\r\n')
    }
  }
  let markClosed = () => {}
  const closed = new Promise<void>((resolve) => {
    markClosed = resolve
  })
  const attach = (next: Socket) => {
    next.on('data', onData)
    next.on('close', () => {
      if (next === socket) markClosed()
    })
    next.on('error', () => {})
  }
  attach(socket)

  const reply = (timeoutMs = 5000) =>
    new Promise<Reply>((resolve, reject) => {
      const ready = replies.shift()
      if (ready) return resolve(ready)
      const timer = setTimeout(() => {
        waiters.splice(waiters.indexOf(done), 1)
        reject(new Error(`no SMTP reply within ${timeoutMs} ms`))
      }, timeoutMs)
      const done = (r: Reply) => {
        clearTimeout(timer)
        resolve(r)
      }
      waiters.push(done)
      closed.then(() => {
        if (waiters.includes(done)) {
          waiters.splice(waiters.indexOf(done), 1)
          clearTimeout(timer)
          reject(new Error('connection closed while waiting for a reply'))
        }
      })
    })

  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  const greeting = await reply()
  return {
    greeting,
    command: (line) => {
      socket.write(`${line}\r\n`)
      return reply()
    },
    reply,
    startTls: async (ca, servername) => {
      socket.write('STARTTLS\r\n')
      const answer = await reply()
      if (answer.code !== 220) return answer
      const plain = socket
      plain.removeListener('data', onData)
      const secure = tlsConnect({ socket: plain, ca, servername })
      await new Promise<void>((resolve, reject) => {
        secure.once('secureConnect', resolve)
        secure.once('error', reject)
      })
      socket = secure
      attach(secure)
      return answer
    },
    sendData: (raw) => {
      socket.write(dotStuff(raw))
    },
    write: (bytes) => {
      socket.write(bytes)
    },
    pending: () => replies.length > 0 || current.length > 0 || buffer.length > 0,
    closed,
    destroy: () => socket.destroy(),
  }
}
