// Sending one DNS message to one server and reading its answer(s): TCP with the two-byte length
// framing of RFC 1035 §4.2.2 (RFC 7766; a zone transfer is many messages on one connection), or a
// single UDP datagram. The resolver in infrastructure/dns/ does the same for recursive lookups, but
// here the answers are raw bytes, because TSIG is verified over the exact bytes received.

import { createSocket } from 'node:dgram'
import { createConnection, isIP } from 'node:net'

export interface DnsEndpoint {
  host: string
  port: number
}

export type ExchangeOutcome = { kind: 'done' } | { kind: 'timeout' } | { kind: 'error'; reason: string }

/** Whether a message answers the query with this id (QR=1 and the same id, RFC 5452 §3). */
export function answers(message: Buffer, id: number): boolean {
  return message.length >= 12 && message.readUInt16BE(0) === id && (message.readUInt16BE(2) & 0x8000) !== 0
}

function reason(server: DnsEndpoint, transport: string, error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code
  return `${transport} ${server.host}:${server.port}: ${typeof code === 'string' ? code : String(error)}`
}

/**
 * Writes `message` and hands every framed answer to `onMessage`, in order, until it returns true.
 * The timeout counts from the last byte received, so a long zone transfer is not cut off.
 */
export function tcpExchange(
  server: DnsEndpoint,
  message: Buffer,
  timeoutMs: number,
  onMessage: (answer: Buffer) => Promise<boolean> | boolean,
): Promise<ExchangeOutcome> {
  return new Promise((resolve) => {
    let buffered = Buffer.alloc(0)
    let done = false
    let chain: Promise<void> = Promise.resolve()
    const socket = createConnection({ host: server.host, port: server.port })
    const finish = (outcome: ExchangeOutcome) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      resolve(outcome)
    }
    let timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs)
    socket.on('error', (error) => finish({ kind: 'error', reason: reason(server, 'tcp', error) }))
    socket.on('close', () => {
      // Frames already received may still be in the chain; only then is an early close an error.
      chain = chain.then(() =>
        finish({ kind: 'error', reason: 'connection closed before the answer was complete' }),
      )
    })
    socket.on('connect', () => {
      const length = Buffer.alloc(2)
      length.writeUInt16BE(message.length)
      socket.write(Buffer.concat([length, message]))
    })
    socket.on('data', (chunk: Buffer) => {
      clearTimeout(timer)
      timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs)
      buffered = Buffer.concat([buffered, chunk])
      while (buffered.length >= 2) {
        const end = 2 + buffered.readUInt16BE(0)
        if (buffered.length < end) break
        const frame = Buffer.from(buffered.subarray(2, end))
        buffered = buffered.subarray(end)
        chain = chain.then(async () => {
          if (done) return
          try {
            if (await onMessage(frame)) finish({ kind: 'done' })
          } catch (error) {
            finish({
              kind: 'error',
              reason: `unreadable answer: ${error instanceof Error ? error.message : error}`,
            })
          }
        })
      }
    })
  })
}

/** One datagram out, the first datagram `accept` takes back (from the connected address only). */
export function udpExchange(
  server: DnsEndpoint,
  message: Buffer,
  timeoutMs: number,
  accept: (answer: Buffer) => boolean,
): Promise<{ kind: 'answer'; answer: Buffer } | { kind: 'timeout' } | { kind: 'error'; reason: string }> {
  return new Promise((resolve) => {
    const socket = createSocket(isIP(server.host) === 6 ? 'udp6' : 'udp4')
    let done = false
    const finish = (outcome: Awaited<ReturnType<typeof udpExchange>>) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.close()
      resolve(outcome)
    }
    const timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs)
    socket.on('error', (error) => finish({ kind: 'error', reason: reason(server, 'udp', error) }))
    socket.on('message', (answer) => {
      if (accept(answer)) finish({ kind: 'answer', answer })
    })
    try {
      socket.connect(server.port, server.host, () => {
        socket.send(
          message,
          (error) => error && finish({ kind: 'error', reason: reason(server, 'udp', error) }),
        )
      })
    } catch (error) {
      finish({ kind: 'error', reason: reason(server, 'udp', error) })
    }
  })
}
