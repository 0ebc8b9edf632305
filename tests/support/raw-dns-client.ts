// Bare DNS clients for tests that need to see the wire: one UDP exchange, or a TCP connection
// with RFC 1035 §4.2.2 framing whose frames can be written in pieces. dns-packet does the encoding
// except where a test needs bytes it cannot express.

import { createSocket } from 'node:dgram'
import { createConnection, type Socket } from 'node:net'
import * as packet from 'dns-packet'

export interface QueryOptions {
  id?: number
  /** EDNS0 UDP payload size (an OPT record is added), or false for none. */
  edns?: number | false
  ednsVersion?: number
  flags?: number
}

export function query(name: string, type: string, options: QueryOptions = {}): Buffer {
  const { id = 4242, edns = false, ednsVersion = 0, flags = 0 } = options
  const additionals =
    edns === false
      ? []
      : [{ type: 'OPT', name: '.', udpPayloadSize: edns, ednsVersion, flags: 0 } as packet.Answer]
  return packet.encode({
    type: 'query',
    id,
    flags,
    questions: [{ name, type, class: 'IN' } as packet.Question],
    additionals,
  })
}

/** Puts a two-byte length in front of a message (RFC 1035 §4.2.2). */
export function frame(message: Buffer): Buffer {
  const length = Buffer.alloc(2)
  length.writeUInt16BE(message.length)
  return Buffer.concat([length, message])
}

/** One datagram out; the decoded reply, or null when none came within `waitMs`. */
export function udpExchange(
  port: number,
  message: Buffer,
  waitMs = 1000,
): Promise<packet.DecodedPacket | null> {
  return new Promise((resolve) => {
    const socket = createSocket('udp4')
    const finish = (reply: packet.DecodedPacket | null) => {
      clearTimeout(timer)
      socket.close()
      resolve(reply)
    }
    const timer = setTimeout(() => finish(null), waitMs)
    socket.on('message', (buf) => finish(packet.decode(buf)))
    socket.send(message, port, '127.0.0.1')
  })
}

export interface TcpClient {
  socket: Socket
  write(bytes: Buffer): void
  /** The next framed reply, decoded. */
  next(): Promise<packet.DecodedPacket>
  /** Resolves when the server closes the connection. */
  closed: Promise<void>
}

/** A TCP client of 127.0.0.1:port; `from` is another loopback address to connect from (127.0.0.2). */
export async function tcpClient(port: number, from?: string): Promise<TcpClient> {
  const socket = createConnection({
    host: '127.0.0.1',
    port,
    allowHalfOpen: true,
    ...(from === undefined ? {} : { localAddress: from }),
  })
  socket.setNoDelay(true)
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  socket.on('error', () => {})
  const replies: packet.DecodedPacket[] = []
  const waiters: ((reply: packet.DecodedPacket) => void)[] = []
  let buffered = Buffer.alloc(0)
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk])
    while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
      const reply = packet.decode(buffered.subarray(2, 2 + buffered.readUInt16BE(0)))
      buffered = buffered.subarray(2 + buffered.readUInt16BE(0))
      const waiter = waiters.shift()
      if (waiter) waiter(reply)
      else replies.push(reply)
    }
  })
  // Half-open is allowed so a test can end its side first; when the server ends, end ours too.
  socket.on('end', () => socket.end())
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  return {
    socket,
    closed,
    write: (bytes) => socket.write(bytes),
    next: () => {
      const reply = replies.shift()
      return reply ? Promise.resolve(reply) : new Promise((resolve) => waiters.push(resolve))
    },
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
