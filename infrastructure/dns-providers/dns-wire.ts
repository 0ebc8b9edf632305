// The DNS wire pieces the RFC 2136 adapter needs and dns-packet does not offer: UPDATE messages
// (RFC 2136 §2) with empty-RDATA deletions and prerequisites, raw record walking to find the TSIG
// RR (RFC 8945 §4.2), and conversion between the port's value form and RDATA. Decoding answers is
// left to dns-packet, which already handles name compression.

import type * as packet from 'dns-packet'
import {
  normalizeName,
  parseMx,
  txtCharacterStrings,
  type WritableType,
} from '../../domain/dns-providers/record-set.ts'

/** RR TYPE numbers (RFC 1035 §3.2.2, RFC 3596, RFC 2782, RFC 8659, RFC 5936, RFC 8945). */
export const TYPE_CODES: Record<string, number> = {
  A: 1,
  NS: 2,
  CNAME: 5,
  SOA: 6,
  PTR: 12,
  MX: 15,
  TXT: 16,
  AAAA: 28,
  SRV: 33,
  CAA: 257,
  TSIG: 250,
  AXFR: 252,
  ANY: 255,
}
export const CLASS_IN = 1
/** RFC 2136 §2.4/§2.5: ANY deletes an RRset or asserts it exists; NONE asserts it does not. */
export const CLASS_NONE = 254
export const CLASS_ANY = 255
export const OPCODE_QUERY = 0
export const OPCODE_UPDATE = 5

/** A record as it goes into a message: numbers and raw RDATA, since deletions have none. */
export interface WireRecord {
  name: string
  type: number
  class: number
  ttl: number
  rdata: Uint8Array
}

/** Uncompressed, lower-cased wire form (the canonical form of RFC 4034 §6.2, which TSIG digests). */
export function encodeName(name: string): Buffer {
  const normalized = normalizeName(name)
  if (normalized === '.' || normalized === '') return Buffer.from([0])
  const parts: Buffer[] = []
  for (const label of normalized.split('.')) {
    const bytes = Buffer.from(label, 'utf8')
    if (bytes.length < 1 || bytes.length > 63) throw new Error(`bad label in "${name}"`)
    parts.push(Buffer.from([bytes.length]), bytes)
  }
  parts.push(Buffer.from([0]))
  return Buffer.concat(parts)
}

/** A name at `offset`, following compression pointers (RFC 1035 §4.1.4); `end` is after it in place. */
export function readName(buf: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = []
  let position = offset
  let end = -1
  for (let hops = 0; hops < 128; hops++) {
    const length = buf[position]
    if (length === undefined) throw new Error('name runs past the message')
    if (length === 0) {
      return {
        name: labels.length === 0 ? '.' : labels.join('.').toLowerCase(),
        end: end < 0 ? position + 1 : end,
      }
    }
    if ((length & 0xc0) === 0xc0) {
      if (end < 0) end = position + 2
      position = ((length & 0x3f) << 8) | (buf[position + 1] ?? 0)
      continue
    }
    labels.push(buf.subarray(position + 1, position + 1 + length).toString('latin1'))
    position += 1 + length
  }
  throw new Error('compression loop in name')
}

const u16 = (value: number) => {
  const b = Buffer.alloc(2)
  b.writeUInt16BE(value)
  return b
}
const u32 = (value: number) => {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(value)
  return b
}

export function encodeRecord(record: WireRecord): Buffer {
  return Buffer.concat([
    encodeName(record.name),
    u16(record.type),
    u16(record.class),
    u32(record.ttl),
    u16(record.rdata.length),
    Buffer.from(record.rdata),
  ])
}

function header(id: number, opcode: number, counts: [number, number, number, number]): Buffer {
  const b = Buffer.alloc(12)
  b.writeUInt16BE(id, 0)
  // QR=0, the opcode in bits 1-4, RD=0: these go to the authoritative server, not a resolver.
  b.writeUInt16BE((opcode & 0xf) << 11, 2)
  for (const [i, count] of counts.entries()) b.writeUInt16BE(count, 4 + i * 2)
  return b
}

/** A query without recursion (the server is authoritative), e.g. an AXFR (RFC 5936 §2.2). */
export function buildQuery(id: number, name: string, type: number): Buffer {
  return Buffer.concat([header(id, OPCODE_QUERY, [1, 0, 0, 0]), encodeName(name), u16(type), u16(CLASS_IN)])
}

/**
 * An UPDATE (RFC 2136 §2): the zone section holds the zone's SOA question (§2.3), then the
 * prerequisites (§2.4) and the updates (§2.5), which the server applies all or none (§3.4).
 */
export function buildUpdate(
  id: number,
  zone: string,
  prerequisites: WireRecord[],
  updates: WireRecord[],
): Buffer {
  return Buffer.concat([
    header(id, OPCODE_UPDATE, [1, prerequisites.length, updates.length, 0]),
    encodeName(zone),
    u16(TYPE_CODES.SOA!),
    u16(CLASS_IN),
    ...prerequisites.map(encodeRecord),
    ...updates.map(encodeRecord),
  ])
}

/** §2.5.2 "Delete an RRset": CLASS ANY, TTL 0, no RDATA. */
export function deleteRRset(name: string, type: string): WireRecord {
  return { name, type: TYPE_CODES[type]!, class: CLASS_ANY, ttl: 0, rdata: new Uint8Array() }
}

/** §2.4.1 "RRset exists (value independent)", or §2.4.3 "RRset does not exist" with CLASS NONE. */
export function rrsetPrerequisite(name: string, type: string, exists: boolean): WireRecord {
  return {
    name,
    type: TYPE_CODES[type]!,
    class: exists ? CLASS_ANY : CLASS_NONE,
    ttl: 0,
    rdata: new Uint8Array(),
  }
}

function ipv4Bytes(text: string): number[] {
  return text.split('.').map(Number)
}

function ipv6Bytes(text: string): Buffer {
  const groups = (part: string): number[] =>
    part === ''
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [Number.parseInt(g, 16)]
          const [a = 0, b = 0, c = 0, d = 0] = ipv4Bytes(g)
          return [(a << 8) | b, (c << 8) | d]
        })
  const [head = '', tail] = text.split('::')
  const first = groups(head)
  const last = tail === undefined ? [] : groups(tail)
  const all =
    tail === undefined ? first : [...first, ...Array(8 - first.length - last.length).fill(0), ...last]
  const out = Buffer.alloc(16)
  for (const [i, group] of all.entries()) out.writeUInt16BE(group, i * 2)
  return out
}

/** RDATA of a value already checked by validateRecordSet (RFC 1035 §3.3, RFC 3596 §2.2). */
export function encodeRdata(type: WritableType, value: string): Buffer {
  switch (type) {
    case 'A':
      return Buffer.from(ipv4Bytes(value))
    case 'AAAA':
      return ipv6Bytes(value)
    case 'CNAME':
      return encodeName(value)
    case 'MX': {
      const mx = parseMx(value)!
      return Buffer.concat([u16(mx.preference), encodeName(mx.exchange)])
    }
    case 'TXT':
      return Buffer.concat(
        txtCharacterStrings(value).map((s) => {
          const bytes = Buffer.from(s, 'utf8')
          return Buffer.concat([Buffer.from([bytes.length]), bytes])
        }),
      )
  }
}

/** The port's value form of a decoded RR (TXT joined, names without the dot), RFC 3597 otherwise. */
export function presentValue(answer: packet.Answer): string {
  const data = (answer as { data?: unknown }).data
  switch (answer.type) {
    case 'TXT': {
      const strings = Array.isArray(data) ? data : [data]
      // Joined as bytes first, so a character split across two strings decodes whole.
      return Buffer.concat(strings.map((s) => (Buffer.isBuffer(s) ? s : Buffer.from(String(s))))).toString(
        'utf8',
      )
    }
    case 'A':
    case 'AAAA':
      return String(data)
    case 'CNAME':
    case 'NS':
    case 'PTR':
    case 'DNAME':
      return normalizeName(String(data))
    case 'MX': {
      const mx = data as { preference?: number; exchange: string }
      return `${mx.preference ?? 0} ${normalizeName(mx.exchange)}`
    }
    case 'SRV': {
      const srv = data as { priority?: number; weight?: number; port?: number; target: string }
      return `${srv.priority ?? 0} ${srv.weight ?? 0} ${srv.port ?? 0} ${normalizeName(srv.target)}`
    }
    case 'SOA': {
      const soa = data as packet.SoaData
      const fields = [soa.serial, soa.refresh, soa.retry, soa.expire, soa.minimum]
      return [normalizeName(soa.mname), normalizeName(soa.rname), ...fields].join(' ')
    }
    case 'CAA': {
      const caa = data as packet.CaaData
      return `${caa.flags ?? 0} ${caa.tag} "${caa.value}"`
    }
    default: {
      const raw = Buffer.isBuffer(data) ? data : Buffer.alloc(0)
      return `\\# ${raw.length} ${raw.toString('hex')}`.trim()
    }
  }
}

/**
 * The offset where the last additional record starts (where a TSIG RR must be, RFC 8945 §5.1),
 * or null when the message has no additional records.
 */
export function lastAdditionalOffset(buf: Buffer): number | null {
  if (buf.length < 12) throw new Error('message shorter than its header')
  const [qd, an, ns, ar] = [4, 6, 8, 10].map((at) => buf.readUInt16BE(at)) as [number, number, number, number]
  if (ar === 0) return null
  let offset = 12
  for (let i = 0; i < qd; i++) offset = readName(buf, offset).end + 4
  let start = offset
  for (let i = 0; i < an + ns + ar; i++) {
    start = offset
    const end = readName(buf, offset).end
    if (end + 10 > buf.length) throw new Error('record runs past the message')
    offset = end + 10 + buf.readUInt16BE(end + 8)
  }
  if (offset > buf.length) throw new Error('record runs past the message')
  return start
}
