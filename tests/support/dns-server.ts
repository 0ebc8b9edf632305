// An in-process authoritative DNS server on 127.0.0.1 for tests: UDP and TCP on the same port,
// a mutable zone, a log of every query received, and knobs to misbehave per name (truncate,
// drop, delay, fail, forge), so resolver tests exercise real sockets and real wire format.

import { createSocket, type Socket as UdpSocket } from 'node:dgram'
import { createServer, type Server, type Socket } from 'node:net'
import * as packet from 'dns-packet'

interface ZoneData {
  A: string
  AAAA: string
  CNAME: string
  NS: string
  PTR: string
  /** One RR; a list is one RR with several character-strings (each at most 255 bytes). */
  TXT: string | string[]
  MX: { preference: number; exchange: string }
  SOA: packet.SoaData
}
export type ZoneType = keyof ZoneData
export type ZoneRecord = { [T in ZoneType]: { type: T; data: ZoneData[T]; ttl?: number } }[ZoneType]
/** Owner name → records. TTLs default to 300. */
export type Zone = Record<string, ZoneRecord[]>

export interface NameBehaviour {
  /** Answer over UDP with TC=1 and no records, so the client must retry over TCP. */
  truncate?: boolean
  /** Never answer (UDP or TCP). */
  drop?: boolean
  /** Wait this long before answering. */
  delayMs?: number
  /** Answer with this RCODE and no records. */
  rcode?: 'FORMERR' | 'SERVFAIL' | 'NOTIMP' | 'REFUSED'
  /** Before the real answer, send an NXDOMAIN with the wrong id or for another question. */
  forgeFirst?: 'id' | 'question'
}

export interface ServerOptions {
  /** Follow CNAMEs inside the zone like an authoritative server (default true). */
  chaseCnames?: boolean
  /** Set the AD bit in answers (default false). */
  authenticated?: boolean
}

export interface LoggedQuery {
  name: string
  type: string
  transport: 'udp' | 'tcp'
  id: number
  rd: boolean
  ad: boolean
  /** The EDNS0 OPT record, when the query had one (RFC 6891). */
  edns?: { udpPayloadSize: number; do: boolean }
}

export interface DnsTestServer {
  port: number
  options: ServerOptions
  readonly queries: LoggedQuery[]
  setZone(zone: Zone): void
  /** Replace the records of one type at one name (an empty list removes them). */
  set<T extends ZoneType>(name: string, type: T, records: { data: ZoneData[T]; ttl?: number }[]): void
  behave(name: string, behaviour: NameBehaviour): void
  /** Forget behaviours and the query log (the zone stays). */
  reset(): void
  stop(): Promise<void>
}

const RCODES = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 }
const DEFAULT_TTL = 300

/** An SOA whose MINIMUM (and TTL) give the negative-caching TTL (RFC 2308 §5). */
export function soa(minimum: number, ttl = 3600): ZoneRecord {
  const data = {
    mname: 'ns1.test',
    rname: 'hostmaster.test',
    serial: 1,
    refresh: 3600,
    retry: 600,
    expire: 86400,
  }
  return { type: 'SOA', ttl, data: { ...data, minimum } }
}

const key = (name: string) => name.toLowerCase().replace(/\.$/, '')

function normalizeZone(zone: Zone): Map<string, ZoneRecord[]> {
  const records = new Map<string, ZoneRecord[]>()
  for (const [name, list] of Object.entries(zone)) {
    for (const record of list) {
      if (record.type === 'TXT') {
        const strings = Array.isArray(record.data) ? record.data : [record.data]
        // RFC 1035 §3.3: a character-string is one length byte plus at most 255 bytes.
        if (strings.some((s) => Buffer.byteLength(s) > 255))
          throw new Error(`TXT string over 255 bytes at ${name}`)
      }
    }
    records.set(key(name), [...(records.get(key(name)) ?? []), ...list])
  }
  return records
}

export async function startDnsServer(
  initial: Zone = {},
  options: ServerOptions = {},
): Promise<DnsTestServer> {
  let zone = normalizeZone(initial)
  const behaviours = new Map<string, NameBehaviour>()
  const queries: LoggedQuery[] = []
  const timers = new Set<ReturnType<typeof setTimeout>>()
  const connections = new Set<Socket>()

  // dns-packet's TXT encoder turns the strings of its input array into Buffers in place: pass a copy.
  const toAnswer = (name: string, record: ZoneRecord) => {
    const data = Array.isArray(record.data) ? [...record.data] : record.data
    return { name, type: record.type, class: 'IN', ttl: record.ttl ?? DEFAULT_TTL, data } as packet.Answer
  }

  // A name exists if it owns records or is an empty non-terminal above one (RFC 8020).
  const exists = (name: string) =>
    zone.has(name) || [...zone.keys()].some((owner) => owner.endsWith(`.${name}`))

  const soaFor = (name: string): packet.Answer[] => {
    const labels = name.split('.')
    for (let i = 0; i < labels.length; i++) {
      const apex = labels.slice(i).join('.')
      const record = zone.get(apex)?.find((r) => r.type === 'SOA')
      if (record !== undefined) return [toAnswer(apex, record)]
    }
    return []
  }

  // Authoritative lookup (RFC 1034 §4.3.2, simplified to one zone with no delegations).
  function lookup(qname: string, type: string) {
    const answers: packet.Answer[] = []
    const visited = new Set<string>()
    let current = qname
    for (;;) {
      if (!exists(current)) {
        // Out of anything we know (after a CNAME) is not ours to deny: return the chain as is.
        const authorities = soaFor(current)
        if (current !== qname && authorities.length === 0) return { rcode: 0, answers, authorities }
        return { rcode: RCODES.NXDOMAIN, answers, authorities }
      }
      visited.add(current)
      const records = zone.get(current) ?? []
      const matching = records.filter((r) => r.type === type)
      if (matching.length > 0) {
        return {
          rcode: 0,
          answers: [...answers, ...matching.map((r) => toAnswer(current, r))],
          authorities: [],
        }
      }
      const cname = type === 'CNAME' ? undefined : records.find((r) => r.type === 'CNAME')
      if (cname?.type !== 'CNAME') return { rcode: 0, answers, authorities: soaFor(current) }
      answers.push(toAnswer(current, cname))
      const target = key(cname.data)
      if (options.chaseCnames === false || visited.has(target)) return { rcode: 0, answers, authorities: [] }
      current = target
    }
  }

  function respond(query: packet.DecodedPacket, transport: 'udp' | 'tcp', send: (buf: Buffer) => void) {
    const question = query.questions?.[0]
    if (question === undefined) return
    const opt = query.additionals?.find((r) => r.type === 'OPT')
    const edns = opt?.type === 'OPT' ? { udpPayloadSize: opt.udpPayloadSize, do: opt.flag_do } : undefined
    const name = key(question.name)
    const id = query.id ?? 0
    queries.push({ name, type: question.type, transport, id, rd: query.flag_rd, ad: query.flag_ad, edns })
    const behaviour = behaviours.get(name) ?? {}
    if (behaviour.drop) return

    const result = behaviour.rcode
      ? { rcode: RCODES[behaviour.rcode], answers: [], authorities: [] }
      : lookup(name, question.type)
    const flags =
      packet.AUTHORITATIVE_ANSWER |
      (query.flag_rd ? packet.RECURSION_DESIRED : 0) |
      (options.authenticated ? packet.AUTHENTIC_DATA : 0)
    const additionals = edns
      ? [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: 0 } as packet.Answer]
      : []
    const message = { type: 'response' as const, id, questions: [question], additionals }
    let reply = packet.encode({ ...message, flags: flags | result.rcode, ...result })
    // RFC 1035 §4.2.1 / RFC 6891 §6.2.3: an answer too big for the client's UDP buffer is truncated.
    const limit = Math.max(512, edns?.udpPayloadSize ?? 512)
    if (transport === 'udp' && (behaviour.truncate || reply.length > limit)) {
      reply = packet.encode({ ...message, flags: flags | packet.TRUNCATED_RESPONSE })
    }
    const sendAll = () => {
      if (behaviour.forgeFirst !== undefined) {
        const forged =
          behaviour.forgeFirst === 'id'
            ? { id: id ^ 0x5a5a }
            : { questions: [{ ...question, name: 'forged.invalid' }] }
        send(packet.encode({ ...message, flags: flags | RCODES.NXDOMAIN, ...forged }))
      }
      send(reply)
    }
    if (!behaviour.delayMs) return sendAll()
    const timer = setTimeout(() => {
      timers.delete(timer)
      sendAll()
    }, behaviour.delayMs)
    timers.add(timer)
  }

  function decode(buf: Buffer): packet.DecodedPacket | null {
    try {
      return packet.decode(buf)
    } catch {
      return null
    }
  }

  const onUdp = (udp: UdpSocket) => (buf: Buffer, peer: { address: string; port: number }) => {
    const query = decode(buf)
    if (query?.type !== 'query') return
    respond(query, 'udp', (reply) => udp.send(reply, peer.port, peer.address))
  }

  const onTcp = (connection: Socket) => {
    connections.add(connection)
    connection.on('close', () => connections.delete(connection))
    connection.on('error', () => connection.destroy())
    let buffered = Buffer.alloc(0)
    // RFC 1035 §4.2.2 / RFC 7766 §6.2.1: several length-prefixed queries may share a connection.
    connection.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk])
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const query = decode(buffered.subarray(2, 2 + buffered.readUInt16BE(0)))
        buffered = buffered.subarray(2 + buffered.readUInt16BE(0))
        if (query?.type !== 'query') continue
        respond(query, 'tcp', (reply) => {
          if (connection.destroyed) return
          const length = Buffer.alloc(2)
          length.writeUInt16BE(reply.length)
          connection.write(Buffer.concat([length, reply]))
        })
      }
    })
  }

  const { udp, tcp, port } = await bindSamePort(onUdp, onTcp)

  return {
    port,
    options,
    queries,
    setZone(next) {
      zone = normalizeZone(next)
    },
    set(name, type, records) {
      const owner = key(name)
      const added =
        normalizeZone({ [owner]: records.map((r) => ({ type, ...r }) as ZoneRecord) }).get(owner) ?? []
      const kept = [...(zone.get(owner) ?? []).filter((r) => r.type !== type), ...added]
      if (kept.length === 0) zone.delete(owner)
      else zone.set(owner, kept)
    },
    behave(name, behaviour) {
      behaviours.set(key(name), behaviour)
    },
    reset() {
      behaviours.clear()
      queries.length = 0
    },
    async stop() {
      for (const timer of timers) clearTimeout(timer)
      for (const connection of connections) connection.destroy()
      await Promise.all([
        new Promise<void>((resolve) => udp.close(() => resolve())),
        new Promise<void>((resolve) => tcp.close(() => resolve())),
      ])
    },
  }
}

/** A random free UDP port, then TCP on the same number; another try if TCP finds it taken. */
async function bindSamePort(
  onUdp: (udp: UdpSocket) => (buf: Buffer, peer: { address: string; port: number }) => void,
  onTcp: (connection: Socket) => void,
): Promise<{ udp: UdpSocket; tcp: Server; port: number }> {
  let lastError: unknown
  for (let attempt = 0; attempt < 20; attempt++) {
    const udp = createSocket('udp4')
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject)
      udp.bind(0, '127.0.0.1', () => resolve())
    })
    const port = udp.address().port
    udp.on('message', onUdp(udp))
    udp.on('error', () => {}) // a vanished client is not the server's problem
    const tcp = createServer(onTcp)
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject)
        tcp.listen(port, '127.0.0.1', () => resolve())
      })
      return { udp, tcp, port }
    } catch (error) {
      lastError = error
      await new Promise<void>((resolve) => udp.close(() => resolve()))
    }
  }
  throw new Error(`no free port for UDP and TCP together: ${String(lastError)}`)
}
