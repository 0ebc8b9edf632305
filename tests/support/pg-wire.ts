import { createConnection, type Socket } from 'node:net'

// A PostgreSQL wire-protocol client (protocol 3.0, "Message Formats") that sends exactly the
// messages a test gives it and can stop at any point: mid extended-query, inside a transaction,
// or by vanishing without a Terminate like a killed process. Trust authentication only.

export interface BackendMessage {
  type: string
  body: Uint8Array
}

const encoder = new TextEncoder()
const cString = (text: string) => encoder.encode(`${text}\0`)

function frame(type: string | null, ...parts: Uint8Array[]): Uint8Array {
  const size = parts.reduce((n, p) => n + p.length, 0)
  const head = type === null ? 0 : 1
  const out = new Uint8Array(head + 4 + size)
  if (type !== null) out[0] = type.charCodeAt(0)
  new DataView(out.buffer).setInt32(head, 4 + size)
  let at = head + 4
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

const int16 = (n: number) => new Uint8Array([(n >> 8) & 0xff, n & 0xff])
const int32 = (n: number) => new Uint8Array([(n >>> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff])

/** Frontend messages. */
export const msg = {
  startup: (user = 'postgres', database = 'postgres') =>
    frame(
      null,
      int32(196608),
      cString('user'),
      cString(user),
      cString('database'),
      cString(database),
      new Uint8Array([0]),
    ),
  query: (sql: string) => frame('Q', cString(sql)),
  parse: (sql: string, name = '') => frame('P', cString(name), cString(sql), int16(0)),
  bind: (portal = '', statement = '') =>
    frame('B', cString(portal), cString(statement), int16(0), int16(0), int16(0)),
  describePortal: (portal = '') => frame('D', encoder.encode('P'), cString(portal)),
  execute: (portal = '') => frame('E', cString(portal), int32(0)),
  flush: () => frame('H'),
  sync: () => frame('S'),
  copyData: (text: string) => frame('d', encoder.encode(text)),
  terminate: () => frame('X'),
}

export class WireClient {
  private buffer = new Uint8Array()
  private readonly inbox: BackendMessage[] = []
  private wake: (() => void) | null = null
  closed = false

  private constructor(private readonly socket: Socket) {
    socket.on('data', (data: Buffer) => {
      const joined = new Uint8Array(this.buffer.length + data.length)
      joined.set(this.buffer)
      joined.set(data, this.buffer.length)
      this.buffer = joined
      while (this.buffer.length >= 5) {
        const length = new DataView(this.buffer.buffer, this.buffer.byteOffset).getInt32(1)
        if (this.buffer.length < 1 + length) break
        this.inbox.push({
          type: String.fromCharCode(this.buffer[0]!),
          body: this.buffer.slice(5, 1 + length),
        })
        this.buffer = this.buffer.slice(1 + length)
      }
      this.wake?.()
    })
    socket.on('close', () => {
      this.closed = true
      this.wake?.()
    })
    socket.on('error', () => {})
  }

  /** Connects to a Unix socket; with `startup` (the default) also completes the startup exchange. */
  static async connect(
    path: string,
    options: { startup?: boolean; timeoutMs?: number } = {},
  ): Promise<WireClient> {
    const socket = createConnection({ path })
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve)
      socket.once('error', reject)
    })
    const client = new WireClient(socket)
    if (options.startup ?? true) {
      client.send(msg.startup())
      await client.until('Z', options.timeoutMs)
    }
    return client
  }

  send(...messages: Uint8Array[]): void {
    this.socket.write(Buffer.concat(messages))
  }

  /** Waits for a message of `type`, then returns (and consumes) everything up to and including it. */
  async until(type: string, timeoutMs = 5_000): Promise<BackendMessage[]> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const at = this.inbox.findIndex((m) => m.type === type)
      if (at >= 0) return this.inbox.splice(0, at + 1)
      if (this.closed) throw new Error(`connection closed while waiting for '${type}'`)
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`no '${type}' within ${timeoutMs} ms`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      this.wake = null
    }
  }

  /** Whether a message of `type` has arrived (without waiting). */
  has(type: string): boolean {
    return this.inbox.some((m) => m.type === type)
  }

  /** Simple query: the ReadyForQuery status (I, T or E) and any error message. */
  async query(sql: string): Promise<{ status: string; error: string | null }> {
    this.send(msg.query(sql))
    const messages = await this.until('Z')
    const error = messages.find((m) => m.type === 'E')
    return {
      status: String.fromCharCode(messages.at(-1)!.body[0]!),
      error: error ? new TextDecoder().decode(error.body) : null,
    }
  }

  /** Gone like a killed process: the socket closes without a Terminate. */
  kill(): void {
    this.socket.destroy()
  }

  /** A polite goodbye, as postgres.js and psql end: Terminate, then close. */
  terminate(): void {
    this.socket.end(msg.terminate())
  }
}
