// A DnsResolver that speaks the DNS wire protocol itself: dns-packet over node:dgram, with TCP
// (node:net) when the answer is truncated. Not node:dns: on Bun 1.4.5 it returns one multi-string
// TXT RR as several records (oven-sh/bun#21370), which breaks 2048-bit DKIM keys and long SPF
// records, and it hides TTLs, RCODEs and the AD bit, all of which the posture checks need.

import { randomBytes } from 'node:crypto'
import { createSocket } from 'node:dgram'
import { readFileSync } from 'node:fs'
import { createConnection, isIP } from 'node:net'
import * as packet from 'dns-packet'
import type { DnsAnswer, DnsRecord, DnsResolver, RecordType } from '../../domain/dns/ports.ts'
import type { RandomBytes } from '../../domain/shared/random.ts'

export interface DnsServer {
  host: string
  port: number
}

export interface DnsPacketResolverOptions {
  /** Tried in order, one per attempt (default: /etc/resolv.conf, see `systemDnsServers`). */
  servers?: DnsServer[]
  /** Per attempt, in milliseconds (default 2000). */
  timeoutMs?: number
  /** Attempts per query, rotating through the servers (default 2). */
  attempts?: number
  /** Repeat a truncated (TC=1) UDP answer over TCP (default true, RFC 7766 §5). */
  tcpFallback?: boolean
  /** Source of the random query ids (default node:crypto). */
  random?: RandomBytes
}

// A chain longer than this is treated as broken, like common resolvers do (RFC 1034 §3.6.2).
const MAX_CNAME_HOPS = 8
// DNS Flag Day 2020: an EDNS buffer of 1232 bytes avoids IP fragmentation (RFC 9715).
const UDP_PAYLOAD_SIZE = 1232
const RCODE_NAMES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED']

/** Parses `host:port,host:port` (IPv6 as `[::1]:53`; the port defaults to 53). Throws on bad input. */
export function parseDnsServers(value: string): DnsServer[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')
    .map((item) => {
      const match = /^\[([^\]]+)\](?::(\d+))?$/.exec(item) ?? /^([^:]+)(?::(\d+))?$/.exec(item)
      const host = match?.[1] ?? (isIP(item) === 6 ? item : '')
      const port = Number(match?.[2] ?? 53)
      if (isIP(host) === 0 || !Number.isInteger(port) || port < 1 || port > 65535) {
        throw new Error(`DNS server "${item}" is not an IP address with an optional port`)
      }
      return { host, port }
    })
}

/** The `nameserver` lines of a resolv.conf text (always port 53, resolv.conf(5)). */
export function parseResolvConf(text: string): DnsServer[] {
  return text
    .split('\n')
    .map((line) => /^\s*nameserver\s+([^\s#;%]+)/.exec(line)?.[1])
    .filter((host): host is string => host !== undefined && isIP(host) !== 0)
    .map((host) => ({ host, port: 53 }))
}

/** The system's resolvers, or 127.0.0.1:53 when resolv.conf is missing or lists none. */
export function systemDnsServers(path = '/etc/resolv.conf'): DnsServer[] {
  let servers: DnsServer[] = []
  try {
    servers = parseResolvConf(readFileSync(path, 'utf8'))
  } catch {
    // No resolv.conf (containers, tests): fall through to the resolv.conf(5) default.
  }
  return servers.length > 0 ? servers : [{ host: '127.0.0.1', port: 53 }]
}

interface Question {
  id: number
  name: string
  type: RecordType
}

type Exchange =
  | { kind: 'response'; message: packet.DecodedPacket; rcode: number }
  | { kind: 'truncated' }
  | { kind: 'timeout' }
  | { kind: 'error'; reason: string }

/** Lower-cased, without the trailing dot; null when it cannot be a domain name (RFC 1035 §2.3.4). */
function normalizeName(raw: string): string | null {
  const name = raw.trim().toLowerCase().replace(/\.$/, '')
  if (name === '' || name.length > 253) return null
  const labelsOk = name.split('.').every((label) => {
    const bytes = Buffer.byteLength(label)
    return bytes >= 1 && bytes <= 63
  })
  return labelsOk ? name : null
}

/** A name from the wire, case-folded and without a trailing dot (the root stays `.`, e.g. null MX). */
function outputName(name: string): string {
  return name === '.' || name === '' ? '.' : name.toLowerCase().replace(/\.$/, '')
}

function encodeQuery(question: Question): Buffer {
  return packet.encode({
    type: 'query',
    id: question.id,
    // RD=1 to use a recursive resolver; AD=1 asks it to report validation without DO=1 (RFC 6840 §5.7).
    flags: packet.RECURSION_DESIRED | packet.AUTHENTIC_DATA,
    questions: [{ type: question.type, name: question.name, class: 'IN' }],
    // EDNS0 (RFC 6891) for answers above 512 bytes; DO=0, we do not want the signatures.
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: UDP_PAYLOAD_SIZE, flags: 0 } as packet.Answer],
  })
}

/**
 * Matches a datagram or TCP frame to the question; null means "not ours, keep waiting", so a forged
 * or stale answer with the wrong id or question cannot end the exchange (RFC 5452 §3).
 */
function inspect(buf: Buffer, question: Question): Exchange | null {
  if (buf.length < 12 || buf.readUInt16BE(0) !== question.id) return null
  const flags = buf.readUInt16BE(2)
  if ((flags & 0x8000) === 0) return null
  // A truncated message may be cut mid-record, so only the header is trusted (RFC 2181 §9).
  if ((flags & packet.TRUNCATED_RESPONSE) !== 0) return { kind: 'truncated' }
  let message: packet.DecodedPacket
  try {
    message = packet.decode(buf)
  } catch {
    return { kind: 'error', reason: 'unparseable response' }
  }
  const asked = message.questions
  if (asked?.length !== 1 || asked[0]?.type !== question.type) return null
  if (asked[0].name.toLowerCase() !== question.name || (asked[0].class ?? 'IN') !== 'IN') return null
  const opt = message.additionals?.find((record) => record.type === 'OPT')
  // The OPT record carries the upper 8 bits of a 12-bit RCODE (RFC 6891 §6.1.3).
  const extended = opt !== undefined && 'extendedRcode' in opt ? opt.extendedRcode : 0
  return { kind: 'response', message, rcode: (extended << 4) | (flags & 0xf) }
}

function failure(server: DnsServer, transport: string, error: unknown): Exchange {
  const code = (error as { code?: unknown } | null)?.code
  return {
    kind: 'error',
    reason: `${transport} ${server.host}:${server.port}: ${typeof code === 'string' ? code : String(error)}`,
  }
}

function udpExchange(server: DnsServer, query: Buffer, question: Question, timeoutMs: number) {
  return new Promise<Exchange>((resolve) => {
    const socket = createSocket(isIP(server.host) === 6 ? 'udp6' : 'udp4')
    let done = false
    const finish = (result: Exchange) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.close()
      resolve(result)
    }
    const timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs)
    socket.on('error', (error) => finish(failure(server, 'udp', error)))
    socket.on('message', (buf) => {
      const result = inspect(buf, question)
      if (result !== null) finish(result)
    })
    // A connected socket only delivers datagrams from the server's address and port (RFC 5452 §3),
    // and the OS picks a random source port (RFC 5452 §4.5).
    try {
      socket.connect(server.port, server.host, () => {
        socket.send(query, (error) => error && finish(failure(server, 'udp', error)))
      })
    } catch (error) {
      finish(failure(server, 'udp', error))
    }
  })
}

function tcpExchange(server: DnsServer, query: Buffer, question: Question, timeoutMs: number) {
  return new Promise<Exchange>((resolve) => {
    let buffered = Buffer.alloc(0)
    let done = false
    const socket = createConnection({ host: server.host, port: server.port })
    const finish = (result: Exchange) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      resolve(result)
    }
    const timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs)
    socket.on('error', (error) => finish(failure(server, 'tcp', error)))
    socket.on('close', () => finish({ kind: 'error', reason: 'TCP connection closed without an answer' }))
    // RFC 1035 §4.2.2: each message is prefixed by its length as a two-byte integer.
    socket.on('connect', () => {
      const length = Buffer.alloc(2)
      length.writeUInt16BE(query.length)
      socket.write(Buffer.concat([length, query]))
    })
    socket.on('data', (chunk: Buffer) => {
      // Frames are consumed as they complete, so the buffer never exceeds one 64 KiB message.
      buffered = Buffer.concat([buffered, chunk])
      while (!done && buffered.length >= 2) {
        const end = 2 + buffered.readUInt16BE(0)
        if (buffered.length < end) return
        const result = inspect(buffered.subarray(2, end), question)
        buffered = buffered.subarray(end)
        if (result?.kind === 'truncated') finish({ kind: 'error', reason: 'truncated answer over TCP' })
        else if (result !== null) finish(result)
      }
    })
  })
}

/** The negative-caching TTL: min(SOA TTL, SOA MINIMUM) from the authority section (RFC 2308 §5). */
function negativeTtl(message: packet.DecodedPacket): number | undefined {
  const soa = message.authorities?.find((record) => record.type === 'SOA')
  if (soa?.type !== 'SOA') return undefined
  return Math.min(soa.ttl ?? 0, soa.data.minimum ?? 0)
}

function toRecord(answer: packet.Answer, maxTtl: number): DnsRecord | null {
  const ttl = Math.min('ttl' in answer ? (answer.ttl ?? 0) : 0, maxTtl)
  switch (answer.type) {
    case 'TXT': {
      // One RR keeps its character-strings apart; joining them is the caller's (RFC 7208 §3.3).
      const data = Array.isArray(answer.data) ? answer.data : [answer.data]
      return { type: 'TXT', strings: data.map((s) => (typeof s === 'string' ? s : s.toString('utf8'))), ttl }
    }
    case 'A':
    case 'AAAA':
      return { type: answer.type, address: answer.data, ttl }
    case 'MX':
      return {
        type: 'MX',
        preference: answer.data.preference ?? 0,
        exchange: outputName(answer.data.exchange),
        ttl,
      }
    case 'CNAME':
    case 'NS':
    case 'PTR':
      return { type: answer.type, target: outputName(answer.data), ttl }
    default:
      return null
  }
}

export function createDnsPacketResolver(options: DnsPacketResolverOptions = {}): DnsResolver {
  const servers = options.servers ?? systemDnsServers()
  const timeoutMs = options.timeoutMs ?? 2000
  const attempts = Math.max(1, options.attempts ?? 2)
  const tcpFallback = options.tcpFallback ?? true
  const random = options.random ?? ((length: number) => new Uint8Array(randomBytes(length)))
  if (servers.length === 0) throw new Error('createDnsPacketResolver needs at least one DNS server')

  // Unpredictable ids are half of the defence against forged answers (RFC 5452 §4.3).
  const newId = () => {
    const bytes = random(2)
    return ((bytes[0] ?? 0) << 8) | (bytes[1] ?? 0)
  }

  async function exchange(name: string, type: RecordType): Promise<Exchange> {
    let outcome: Exchange = { kind: 'timeout' }
    for (let attempt = 0; attempt < attempts; attempt++) {
      const server = servers[attempt % servers.length]!
      const question = { id: newId(), name, type }
      const query = encodeQuery(question)
      let result = await udpExchange(server, query, question, timeoutMs)
      if (result.kind === 'truncated') {
        result = tcpFallback
          ? await tcpExchange(server, query, question, timeoutMs)
          : { kind: 'error', reason: 'truncated answer and TCP fallback is off' }
      }
      if (result.kind === 'response' && [0, 3].includes(result.rcode)) return result
      if (result.kind !== 'timeout' || outcome.kind === 'timeout') outcome = result
      // Only silence is worth repeating to the same server; a failure is worth another server.
      if (result.kind !== 'timeout' && servers.length === 1) break
    }
    return outcome
  }

  return {
    async resolve(rawName, type): Promise<DnsAnswer> {
      const name = normalizeName(rawName)
      if (name === null) return { status: 'error', reason: `invalid domain name "${rawName}"` }
      const visited = new Set([name])
      let current = name
      let chainTtl = Number.POSITIVE_INFINITY
      let authenticated = true
      const capped = (ttl: number | undefined) => (ttl === undefined ? undefined : Math.min(ttl, chainTtl))

      // Each pass queries a name not seen before, so `visited` bounds the number of queries too.
      for (;;) {
        const result = await exchange(current, type)
        if (result.kind === 'timeout') return { status: 'timeout' }
        if (result.kind !== 'response') {
          return { status: 'error', reason: result.kind === 'error' ? result.reason : 'truncated' }
        }
        const { message, rcode } = result
        if (rcode !== 0 && rcode !== 3) {
          return { status: 'error', reason: `server answered ${RCODE_NAMES[rcode] ?? `RCODE ${rcode}`}` }
        }
        authenticated &&= message.flag_ad
        const answers = (message.answers ?? []).filter((a) => a.type !== 'OPT' && (a.class ?? 'IN') === 'IN')
        const queried = current
        // Follow the chain through the answer section (RFC 1034 §3.6.2); only records owned by the
        // current name count, so an answer cannot smuggle in data for unrelated names.
        for (;;) {
          const cname =
            type === 'CNAME'
              ? undefined
              : answers.find((a) => a.type === 'CNAME' && a.name.toLowerCase() === current)
          if (cname?.type !== 'CNAME') break
          const target = outputName(cname.data)
          if (visited.has(target)) return { status: 'error', reason: `CNAME loop at ${target}` }
          if (visited.size > MAX_CNAME_HOPS) return { status: 'error', reason: 'CNAME chain too long' }
          visited.add(target)
          current = target
          // A record reached through a CNAME may be reused only as long as the CNAME itself.
          chainTtl = Math.min(chainTtl, cname.ttl ?? 0)
        }
        // RFC 6604 §2: after a CNAME, NXDOMAIN describes the last name of the chain.
        if (rcode === 3) return { status: 'nxdomain', ttl: capped(negativeTtl(message)) }
        const records = answers
          .filter((a) => a.type === type && a.name.toLowerCase() === current)
          .map((a) => toRecord(a, chainTtl))
          .filter((r): r is DnsRecord => r !== null)
        if (records.length > 0) return { status: 'ok', records, authenticated }
        const soaTtl = negativeTtl(message)
        // A server that stopped at a CNAME without negative proof (an SOA) did not chase it: ask again.
        if (current === queried || soaTtl !== undefined) return { status: 'nodata', ttl: capped(soaTtl) }
      }
    },
  }
}
