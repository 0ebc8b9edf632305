// Just enough of the DNS wire format (RFC 1035 §4.1) for the hosted-zone responder: parse a query,
// encode an answer. Not dns-packet: its decoder joins labels into one UTF-8 string, so a label that
// holds a '.' or bytes that are not UTF-8 cannot be told apart from other names nor echoed back byte
// for byte, and its encoder does not compress names. The question is kept as received and answers
// point back at it, so the client sees its own spelling (RFC 4343 §4.1, the 0x20 case check).

export const TYPE = { NS: 2, SOA: 6, TXT: 16, OPT: 41, IXFR: 251, AXFR: 252, ANY: 255 } as const
export const CLASS_IN = 1
export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const
/** RFC 6891 §6.1.3: BADVERS is RCODE 16, sent as 1 in the OPT record's upper eight RCODE bits. */
export const BADVERS_EXTENDED = 1

export const FLAG = { QR: 0x8000, AA: 0x0400, TC: 0x0200, RD: 0x0100, CD: 0x0010 } as const
export const OPCODE_MASK = 0x7800
const HEADER_BYTES = 12
// RFC 1035 §3.1: a name is at most 255 octets on the wire, labels and length bytes included.
const MAX_NAME_BYTES = 255

export interface ParsedQuestion {
  /** The name, type and class exactly as received. */
  wire: Buffer
  /** Labels lower-cased (ASCII only, RFC 4343 §2), anything but LDH and '_' as \DDD (RFC 1035 §5.1). */
  labels: string[]
  /** Byte offset of each label inside `wire`, for pointers to a suffix of the question name. */
  offsets: number[]
  type: number
  class: number
}

export interface ParsedQuery {
  id: number
  flags: number
  opcode: number
  questionCount: number
  /** Parsed only for a standard query with exactly one question. */
  question?: ParsedQuestion
  /** The OPT pseudo-record (RFC 6891 §6.1.2); 'malformed' for two of them or a non-root owner. */
  edns?: { udpPayloadSize: number; version: number } | 'malformed'
}

/** Thrown on a message cut short or with an impossible name; parseQuery turns it into null. */
const MALFORMED = new Error('malformed DNS message')

function need(buf: Buffer, offset: number, bytes: number): void {
  if (offset + bytes > buf.length) throw MALFORMED
}

function labelText(buf: Buffer, start: number, end: number): string {
  let text = ''
  for (let i = start; i < end; i++) {
    const byte = buf[i]!
    const lower = byte >= 0x41 && byte <= 0x5a ? byte + 0x20 : byte
    const plain =
      (lower >= 0x61 && lower <= 0x7a) || (lower >= 0x30 && lower <= 0x39) || lower === 0x2d || lower === 0x5f
    text += plain ? String.fromCharCode(lower) : `\\${String(byte).padStart(3, '0')}`
  }
  return text
}

/** The question's name: uncompressed labels only, since a query has no earlier name to point at. */
function parseQuestion(buf: Buffer): ParsedQuestion {
  const labels: string[] = []
  const offsets: number[] = []
  let offset = HEADER_BYTES
  for (;;) {
    need(buf, offset, 1)
    const length = buf[offset]!
    if (length === 0) break
    if ((length & 0xc0) !== 0) throw MALFORMED
    need(buf, offset, 1 + length)
    offsets.push(offset - HEADER_BYTES)
    labels.push(labelText(buf, offset + 1, offset + 1 + length))
    offset += 1 + length
    if (offset + 1 - HEADER_BYTES > MAX_NAME_BYTES) throw MALFORMED
  }
  offset += 1
  need(buf, offset, 4)
  const type = buf.readUInt16BE(offset)
  const klass = buf.readUInt16BE(offset + 2)
  return { wire: buf.subarray(HEADER_BYTES, offset + 4), labels, offsets, type, class: klass }
}

/** Skips a possibly compressed name (RFC 1035 §4.1.4) and returns where the record goes on. */
function skipName(buf: Buffer, start: number): number {
  let offset = start
  for (;;) {
    need(buf, offset, 1)
    const length = buf[offset]!
    if (length === 0) return offset + 1
    if ((length & 0xc0) === 0xc0) {
      need(buf, offset, 2)
      return offset + 2
    }
    if ((length & 0xc0) !== 0) throw MALFORMED
    offset += 1 + length
  }
}

/** Null for anything that cannot be answered at all: too short, a response, or cut short. */
export function parseQuery(buf: Buffer): ParsedQuery | null {
  if (buf.length < HEADER_BYTES) return null
  const flags = buf.readUInt16BE(2)
  // Never answer a response: two servers could otherwise bounce messages between them forever.
  if ((flags & FLAG.QR) !== 0) return null
  const query: ParsedQuery = {
    id: buf.readUInt16BE(0),
    flags,
    opcode: (flags & OPCODE_MASK) >> 11,
    questionCount: buf.readUInt16BE(4),
  }
  if (query.opcode !== 0 || query.questionCount !== 1) return query
  try {
    query.question = parseQuestion(buf)
    let offset = HEADER_BYTES + query.question.wire.length
    const [answers, authorities, additionals] = [
      buf.readUInt16BE(6),
      buf.readUInt16BE(8),
      buf.readUInt16BE(10),
    ]
    for (let i = 0; i < answers + authorities + additionals; i++) {
      const owner = offset
      offset = skipName(buf, offset)
      need(buf, offset, 10)
      const type = buf.readUInt16BE(offset)
      const end = offset + 10 + buf.readUInt16BE(offset + 8)
      need(buf, end, 0)
      if (i >= answers + authorities && type === TYPE.OPT) {
        // RFC 6891 §6.1.1: one OPT at most, owned by the root; anything else is FORMERR.
        const valid = query.edns === undefined && buf[owner] === 0
        query.edns = valid
          ? { udpPayloadSize: buf.readUInt16BE(offset + 2), version: buf[offset + 5]! }
          : 'malformed'
      }
      offset = end
    }
  } catch (error) {
    if (error === MALFORMED || error instanceof RangeError) return null
    throw error
  }
  return query
}

/** A name from the configuration (validated LDH labels) in wire form, uncompressed. */
export function encodeName(name: string): Buffer {
  const labels = name === '' ? [] : name.split('.')
  const parts = labels.map((label) => Buffer.concat([Buffer.of(label.length), Buffer.from(label, 'ascii')]))
  return Buffer.concat([...parts, Buffer.of(0)])
}

/** A compression pointer to `offset` from the start of the message (RFC 1035 §4.1.4). */
export function pointer(offset: number): Buffer {
  return Buffer.of(0xc0 | (offset >> 8), offset & 0xff)
}

/**
 * One TXT value as character-strings of at most 255 bytes in one RR (RFC 1035 §3.3.14, RFC 7208
 * §3.3), cut between UTF-8 sequences so that each string decodes on its own.
 */
export function txtRdata(value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8')
  const parts: Buffer[] = []
  let start = 0
  do {
    let end = Math.min(start + 255, bytes.length)
    // 0b10xxxxxx is a continuation byte: back up to the start of its character.
    while (end < bytes.length && end > start + 252 && (bytes[end]! & 0xc0) === 0x80) end--
    parts.push(Buffer.of(end - start), bytes.subarray(start, end))
    start = end
  } while (start < bytes.length)
  return Buffer.concat(parts)
}

export interface SoaFields {
  mname: string
  rname: string
  serial: number
  refresh: number
  retry: number
  expire: number
  minimum: number
}

export function soaRdata(soa: SoaFields): Buffer {
  const numbers = Buffer.alloc(20)
  ;[soa.serial, soa.refresh, soa.retry, soa.expire, soa.minimum].forEach((n, i) => {
    numbers.writeUInt32BE(n, i * 4)
  })
  return Buffer.concat([encodeName(soa.mname), encodeName(soa.rname), numbers])
}

export interface ResourceRecord {
  /** The owner name in wire form: usually a pointer into the question. */
  owner: Buffer
  type: number
  ttl: number
  rdata: Buffer
}

export interface Response {
  id: number
  /** QR, opcode, AA, TC, RD, CD and the low four RCODE bits. */
  flags: number
  question?: Buffer
  answers?: ResourceRecord[]
  authorities?: ResourceRecord[]
  /** Our OPT record (RFC 6891 §6.1.2), sent when the query had one. */
  opt?: { udpPayloadSize: number; extendedRcode: number }
}

function encodeRecord(record: ResourceRecord): Buffer {
  const fixed = Buffer.alloc(10)
  fixed.writeUInt16BE(record.type, 0)
  fixed.writeUInt16BE(CLASS_IN, 2)
  fixed.writeUInt32BE(record.ttl, 4)
  fixed.writeUInt16BE(record.rdata.length, 8)
  return Buffer.concat([record.owner, fixed, record.rdata])
}

export function encodeResponse(response: Response): Buffer {
  const answers = response.answers ?? []
  const authorities = response.authorities ?? []
  const header = Buffer.alloc(HEADER_BYTES)
  header.writeUInt16BE(response.id, 0)
  header.writeUInt16BE(response.flags, 2)
  header.writeUInt16BE(response.question === undefined ? 0 : 1, 4)
  header.writeUInt16BE(answers.length, 6)
  header.writeUInt16BE(authorities.length, 8)
  header.writeUInt16BE(response.opt === undefined ? 0 : 1, 10)
  const parts = [
    header,
    response.question ?? Buffer.alloc(0),
    ...[...answers, ...authorities].map(encodeRecord),
  ]
  if (response.opt !== undefined) {
    // Root owner, TYPE 41, CLASS = our UDP payload size, TTL = extended RCODE, version 0, DO=0.
    const opt = Buffer.alloc(11)
    opt.writeUInt16BE(TYPE.OPT, 1)
    opt.writeUInt16BE(response.opt.udpPayloadSize, 3)
    opt[5] = response.opt.extendedRcode
    parts.push(opt)
  }
  return Buffer.concat(parts)
}
