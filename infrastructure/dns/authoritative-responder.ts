// The authoritative DNS server for the service's hosted zone (issue #5): the per-domain SPF and
// DMARC records users reach through include: or a CNAME. UDP and TCP on one port (RFC 1035 §4.2,
// RFC 7766 §5: TCP is mandatory for an authoritative server). Every buffer, connection and pending
// lookup is capped, so a flood costs at most the caps. See docs/hosted-dns.md.

import { createSocket, type Socket as UdpSocket } from 'node:dgram'
import { createServer, isIP, type Server, type Socket } from 'node:net'
import { connectionsPerClient } from '../runtime/connections-per-client.ts'
import {
  answerQuery,
  type HostedRecordSet,
  type HostedZone,
  type ResponderLogger,
} from './authoritative-answer.ts'
import { type ParsedQuery, parseQuery } from './authoritative-wire.ts'

export type { HostedRecordSet, ResponderLogger } from './authoritative-answer.ts'

export interface AuthoritativeResponderOptions {
  /** The address to bind, an IP literal ('0.0.0.0', '::', '127.0.0.1'). */
  host: string
  /** UDP and TCP port; 0 picks a free one, the same for both. */
  port: number
  /** The apex, e.g. 'spf.dmarcwatch.example'. */
  zone: string
  /** The NS records at the apex; the first is the SOA MNAME. */
  nameservers: string[]
  /** The SOA RNAME: 'hostmaster.example.com' or 'hostmaster@example.com'. */
  hostmaster: string
  /** Called with the full lower-case name (no trailing dot) of an in-zone question; null = no such name. */
  lookup: (name: string) => Promise<HostedRecordSet | null>
  /** TTL of every answer, in seconds (default 300). */
  ttl?: number
  /** How long resolvers may cache "no such name" (SOA MINIMUM, RFC 2308 §5; default 60). */
  negativeTtl?: number
  /** A lookup slower than this answers SERVFAIL (default 2000 ms). */
  lookupTimeoutMs?: number
  /** A TCP connection without traffic or pending queries is closed after this (default 10 s). */
  tcpIdleTimeoutMs?: number
  /** Further TCP connections are closed at once (default 100). */
  maxTcpConnections?: number
  /**
   * TCP connections from one client, an IPv6 one counted by its /64 (default 20; RFC 7766 §6.2.2
   * lets a server limit them per client): one host holding all 100 with a byte every few seconds
   * shut out the resolvers that need TCP for a truncated answer. Looser than the SMTP listener's
   * 10 per /56: a resolver farm's hosts may share a network, and each needs TCP only briefly.
   */
  maxTcpConnectionsPerClient?: number
  logger?: ResponderLogger
}

export interface AuthoritativeResponder {
  port: number
  close(): Promise<void>
}

// Queries waiting for a lookup; past this, UDP queries are dropped (the resolver retries).
const MAX_UDP_PENDING = 512
// A query is a header, one name (≤255 bytes) and an OPT record: 4 KiB leaves room for EDNS options.
const MAX_TCP_QUERY_BYTES = 4096
// RFC 7766 §6.2.1.1: pipelined queries are answered concurrently, up to this many per connection;
// beyond it the socket is paused and TCP flow control holds the client back.
const MAX_TCP_PIPELINE = 16
// A client that does not read its answers is cut off once this much is waiting to be sent.
const MAX_TCP_WRITE_BACKLOG = 256 * 1024
const BIND_ATTEMPTS = 20

/** Lower-case, no trailing dot; letters, digits, '-' and '_' in 1-63 byte labels (RFC 1035 §2.3.4). */
function domainName(value: string, what: string): string {
  const name = value.trim().toLowerCase().replace(/\.$/, '')
  const valid =
    name.length > 0 &&
    name.length <= 253 &&
    name.split('.').every((label) => /^[a-z0-9_-]{1,63}$/.test(label))
  if (!valid) throw new Error(`${what} "${value}" is not a domain name`)
  return name
}

/** RFC 1035 §8: the mailbox's '@' becomes a dot, so its local part cannot hold one. */
function mailboxName(value: string): string {
  const at = value.indexOf('@')
  if (at === -1) return domainName(value, 'hostmaster')
  if (value.slice(0, at).includes('.')) throw new Error(`hostmaster "${value}" has a dot in its local part`)
  return domainName(value.replace('@', '.'), 'hostmaster')
}

function seconds(value: number | undefined, fallback: number, what: string): number {
  const result = value ?? fallback
  // RFC 2181 §8: a TTL is an unsigned 31-bit number of seconds.
  if (!Number.isInteger(result) || result < 0 || result > 0x7fffffff)
    throw new Error(`${what} must be 0..2^31-1`)
  return result
}

function hostedZone(options: AuthoritativeResponderOptions): HostedZone {
  if (options.nameservers.length === 0) throw new Error('the hosted zone needs at least one nameserver')
  return {
    apex: domainName(options.zone, 'zone'),
    nameservers: options.nameservers.map((ns) => domainName(ns, 'nameserver')),
    hostmaster: mailboxName(options.hostmaster),
    ttl: seconds(options.ttl, 300, 'ttl'),
    negativeTtl: seconds(options.negativeTtl, 60, 'negativeTtl'),
    lookupTimeoutMs: options.lookupTimeoutMs ?? 2000,
    lookup: options.lookup,
    logger: options.logger,
  }
}

export async function startAuthoritativeResponder(
  options: AuthoritativeResponderOptions,
): Promise<AuthoritativeResponder> {
  const zone = hostedZone(options)
  const idleMs = options.tcpIdleTimeoutMs ?? 10_000
  const maxConnections = options.maxTcpConnections ?? 100
  const perClient = connectionsPerClient(options.maxTcpConnectionsPerClient ?? 20, 64)
  let nextConnection = 0
  const family = isIP(options.host)
  if (family === 0) throw new Error(`host "${options.host}" is not an IP address`)
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) {
    throw new Error(`port ${options.port} is not 0..65535`)
  }
  const connections = new Set<Socket>()
  let udpPending = 0
  let closed = false
  // answerQuery turns every lookup failure into SERVFAIL; this only guards against its own bugs,
  // which must not become an unhandled rejection that takes the process down.
  const answer = (query: ParsedQuery, transport: 'udp' | 'tcp') =>
    answerQuery(query, zone, transport).catch((error: unknown) => {
      zone.logger?.warn('hosted DNS query failed', { error: String(error) })
      return null
    })

  const onUdpMessage = (udp: UdpSocket) => (message: Buffer, peer: { address: string; port: number }) => {
    // Garbage and responses get no answer at all: a reply would make us a reflector for them.
    const query = closed || udpPending >= MAX_UDP_PENDING || peer.port === 0 ? null : parseQuery(message)
    if (query === null) return
    udpPending++
    void answer(query, 'udp')
      .then((reply) => {
        if (reply !== null && !closed) udp.send(reply, peer.port, peer.address, () => {})
      })
      .catch(() => {}) // a send on a socket closed meanwhile: nothing to tell anyone
      .finally(() => udpPending--)
  }

  const onTcpConnection = (socket: Socket) => {
    const id = String(nextConnection++)
    if (closed || connections.size >= maxConnections || !perClient.open(id, socket.remoteAddress ?? '')) {
      socket.destroy()
      return
    }
    connections.add(socket)
    socket.setNoDelay(true)
    let buffered: Buffer = Buffer.alloc(0)
    let pending = 0
    let readDone = false
    let idleTimer: ReturnType<typeof setTimeout> | undefined
    // RFC 7766 §6.2.3: close idle connections, but never one with an answer still on its way.
    const touch = () => {
      clearTimeout(idleTimer)
      idleTimer = setTimeout(() => (pending === 0 ? socket.destroy() : touch()), idleMs)
    }
    const send = (reply: Buffer) => {
      if (socket.destroyed) return
      // RFC 1035 §4.2.2: a two-byte length before each message.
      const length = Buffer.alloc(2)
      length.writeUInt16BE(reply.length)
      socket.write(Buffer.concat([length, reply]))
      if (socket.writableLength > MAX_TCP_WRITE_BACKLOG) socket.destroy()
      touch()
    }
    const pump = () => {
      if (socket.destroyed) return
      while (!socket.destroyed && pending < MAX_TCP_PIPELINE && buffered.length >= 2) {
        const length = buffered.readUInt16BE(0)
        if (length > MAX_TCP_QUERY_BYTES) return socket.destroy()
        if (buffered.length < 2 + length) break
        // A message that cannot be parsed leaves the framing in doubt: close rather than guess.
        const query = parseQuery(buffered.subarray(2, 2 + length))
        buffered = buffered.subarray(2 + length)
        if (query === null) return socket.destroy()
        pending++
        void answer(query, 'tcp').then((reply) => {
          pending--
          if (reply === null) return socket.destroy()
          send(reply)
          pump()
        })
      }
      if (pending >= MAX_TCP_PIPELINE) socket.pause()
      else if (readDone && pending === 0) socket.end()
      else socket.resume()
    }
    socket.on('data', (chunk: Buffer) => {
      // What stays buffered is at most one incomplete frame (≤ 2 + 4096 bytes) plus the rest of
      // the chunk a full pipeline paused on.
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk])
      touch()
      pump()
    })
    // The client may half-close after its last query (allowHalfOpen): answer what is pending first.
    socket.on('end', () => {
      readDone = true
      pump()
    })
    socket.on('error', () => socket.destroy())
    socket.on('close', () => {
      clearTimeout(idleTimer)
      connections.delete(socket)
      perClient.close(id)
    })
    touch()
  }

  const { udp, tcp, port } = await bindSamePort(
    options.host,
    options.port,
    family,
    onUdpMessage,
    onTcpConnection,
  )
  udp.on('error', (error) => zone.logger?.warn('hosted DNS UDP socket error', { error: String(error) }))
  tcp.on('error', (error) => zone.logger?.warn('hosted DNS TCP server error', { error: String(error) }))

  let closing: Promise<void> | undefined
  return {
    port,
    close() {
      closed = true
      closing ??= (async () => {
        for (const socket of connections) socket.destroy()
        await Promise.all([
          new Promise<void>((resolve) => udp.close(() => resolve())),
          new Promise<void>((resolve) => tcp.close(() => resolve())),
        ])
      })()
      return closing
    },
  }
}

/**
 * UDP first, then TCP on the same number. With port 0 the OS picks a free UDP port that TCP may
 * find taken; then both are released and tried again with a new one.
 */
async function bindSamePort(
  host: string,
  port: number,
  family: number,
  onUdp: (udp: UdpSocket) => (message: Buffer, peer: { address: string; port: number }) => void,
  onTcp: (socket: Socket) => void,
): Promise<{ udp: UdpSocket; tcp: Server; port: number }> {
  let lastError: unknown
  for (let attempt = 0; attempt < (port === 0 ? BIND_ATTEMPTS : 1); attempt++) {
    const udp = createSocket(family === 6 ? 'udp6' : 'udp4')
    try {
      await new Promise<void>((resolve, reject) => {
        udp.once('error', reject)
        udp.bind(port, host, () => {
          udp.off('error', reject)
          resolve()
        })
      })
    } catch (error) {
      udp.close()
      throw bindError(error, host, port)
    }
    const bound = udp.address().port
    const tcp = createServer({ allowHalfOpen: true }, onTcp)
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject)
        tcp.listen(bound, host, () => {
          tcp.off('error', reject)
          resolve()
        })
      })
      udp.on('message', onUdp(udp))
      return { udp, tcp, port: bound }
    } catch (error) {
      lastError = error
      await new Promise<void>((resolve) => udp.close(() => resolve()))
    }
  }
  throw bindError(lastError, host, port)
}

function bindError(error: unknown, host: string, port: number): Error {
  const code = (error as { code?: unknown } | null)?.code
  // Ports below 1024 need privileges on Linux; see docs/hosted-dns.md for the options.
  const hint = code === 'EACCES' && port < 1024 ? ' (needs CAP_NET_BIND_SERVICE or a port redirect)' : ''
  // The code stays on the error, so the caller can tell a port in use from other trouble.
  return Object.assign(
    new Error(`hosted DNS cannot bind ${host}:${port}: ${String(code ?? error)}${hint}`, { cause: error }),
    typeof code === 'string' ? { code } : {},
  )
}
