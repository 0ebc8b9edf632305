// The authoritative answer to one parsed query for the hosted zone (RFC 1034 §4.3.2, simplified to
// one zone without delegations, wildcards or CNAMEs). Transport-free: the responder hands in a
// parsed query and the size the client can take, and sends back whatever this returns.

import {
  BADVERS_EXTENDED,
  CLASS_IN,
  encodeName,
  encodeResponse,
  FLAG,
  OPCODE_MASK,
  type ParsedQuery,
  pointer,
  RCODE,
  type ResourceRecord,
  type Response,
  soaRdata,
  TYPE,
  txtRdata,
} from './authoritative-wire.ts'

/** What the service publishes at one name; each entry is one TXT record, of any length. */
export interface HostedRecordSet {
  txt: string[]
}

export interface ResponderLogger {
  warn(msg: string, fields?: object): void
}

export interface HostedZone {
  /** The apex, lower-case, without the trailing dot. */
  apex: string
  nameservers: string[]
  /** The SOA RNAME, in domain-name form. */
  hostmaster: string
  ttl: number
  negativeTtl: number
  lookupTimeoutMs: number
  /** The full lower-case name without the trailing dot; null when the name does not exist. */
  lookup: (name: string) => Promise<HostedRecordSet | null>
  logger?: ResponderLogger
}

// DNS Flag Day 2020 (RFC 9715): larger UDP answers risk IP fragmentation, so TCP takes over.
export const MAX_UDP_PAYLOAD = 1232
// RFC 1035 §4.2.1: without EDNS0 a UDP message is at most 512 bytes.
const CLASSIC_UDP_PAYLOAD = 512
const MAX_TCP_MESSAGE = 65535
const HEADER_BYTES = 12

// Without secondaries (no zone transfers) only MINIMUM matters; the rest follow RFC 1912 §2.2.
const SOA_TIMERS = { serial: 1, refresh: 3600, retry: 600, expire: 1209600 }

function lookupWithTimeout(zone: HostedZone, name: string): Promise<HostedRecordSet | null> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer within ${zone.lookupTimeoutMs} ms`)),
      zone.lookupTimeoutMs,
    )
  })
  // Through then(), so a lookup that throws synchronously is a rejection like any other.
  const lookup = Promise.resolve(name).then(zone.lookup)
  return Promise.race([lookup, timeout]).finally(() => clearTimeout(timer))
}

function isRecordSet(value: unknown): value is HostedRecordSet {
  const txt = (value as { txt?: unknown } | null)?.txt
  return Array.isArray(txt) && txt.every((entry) => typeof entry === 'string')
}

interface Sections {
  rcode: number
  answers: ResourceRecord[]
  authorities: ResourceRecord[]
}

async function resolveInZone(query: ParsedQuery, zone: HostedZone, zoneLabels: number): Promise<Sections> {
  const question = query.question!
  const name = question.labels.join('.')
  const isApex = question.labels.length === zoneLabels
  // Owner names point into the question: the answer at its name, the SOA at the zone's suffix of it.
  const owner = pointer(HEADER_BYTES)
  const apexOwner = pointer(HEADER_BYTES + question.offsets[question.labels.length - zoneLabels]!)
  const soa = (ttl: number): ResourceRecord => ({
    owner: apexOwner,
    type: TYPE.SOA,
    ttl,
    rdata: soaRdata({
      mname: zone.nameservers[0]!,
      rname: zone.hostmaster,
      ...SOA_TIMERS,
      minimum: zone.negativeTtl,
    }),
  })
  // RFC 2308 §3: the SOA of a negative answer carries min(SOA TTL, MINIMUM) as its TTL.
  const negative = (rcode: number): Sections => ({
    rcode,
    answers: [],
    authorities: [soa(Math.min(zone.ttl, zone.negativeTtl))],
  })
  const positive = (answers: ResourceRecord[]): Sections => ({
    rcode: RCODE.NOERROR,
    answers,
    authorities: [],
  })

  if (isApex && question.type === TYPE.SOA) return positive([soa(zone.ttl)])
  if (isApex && question.type === TYPE.NS) {
    return positive(
      zone.nameservers.map((ns) => ({ owner, type: TYPE.NS, ttl: zone.ttl, rdata: encodeName(ns) })),
    )
  }
  // Only TXT and ANY need the data; other types at the apex exist-but-empty without asking.
  const needsData = question.type === TYPE.TXT || question.type === TYPE.ANY || !isApex
  const set = needsData ? await lookupWithTimeout(zone, name) : null
  if (set !== null && !isRecordSet(set))
    throw new Error('lookup returned something other than { txt: string[] }')
  if (set === null && !isApex) return negative(RCODE.NXDOMAIN)
  // RFC 2181 §5: an RRset holds no duplicates.
  const txt = [...new Set(set?.txt ?? [])].map((value) => ({
    owner,
    type: TYPE.TXT,
    ttl: zone.ttl,
    rdata: txtRdata(value),
  }))
  if ((question.type === TYPE.TXT || question.type === TYPE.ANY) && txt.length > 0) return positive(txt)
  // RFC 8482 §4.1: ANY gets one RRset, not everything; at the apex without TXT that is the SOA.
  if (question.type === TYPE.ANY && isApex) return positive([soa(zone.ttl)])
  return negative(RCODE.NOERROR)
}

function inZone(labels: string[], zoneLabels: string[]): boolean {
  // Label by label: a string suffix would put "evilspf.example" or "a\046spf.example" inside.
  if (labels.length < zoneLabels.length) return false
  const tail = labels.slice(labels.length - zoneLabels.length)
  return tail.every((label, i) => label === zoneLabels[i])
}

/** The encoded answer to a query; `transport` sets the size limit (RFC 1035 §4.2, RFC 6891 §6.2.5). */
export async function answerQuery(
  query: ParsedQuery,
  zone: HostedZone,
  transport: 'udp' | 'tcp',
): Promise<Buffer> {
  const edns = typeof query.edns === 'object' ? query.edns : undefined
  const reply: Response = {
    id: query.id,
    // RFC 1035 §4.1.1: opcode and RD are copied; RFC 4035 §3.1.6 copies CD as well.
    flags: FLAG.QR | (query.flags & (OPCODE_MASK | FLAG.RD | FLAG.CD)),
    opt: edns && { udpPayloadSize: MAX_UDP_PAYLOAD, extendedRcode: 0 },
  }
  const fail = (rcode: number, withQuestion = true) =>
    encodeResponse({
      ...reply,
      flags: reply.flags | rcode,
      question: withQuestion ? query.question?.wire : undefined,
    })

  // RFC 1035 §4.1.1: only standard queries; NOTIFY, UPDATE and the rest are not implemented.
  if (query.opcode !== 0) return fail(RCODE.NOTIMP, false)
  // RFC 9619: a query carries exactly one question.
  if (query.questionCount !== 1 || query.question === undefined) return fail(RCODE.FORMERR, false)
  if (query.edns === 'malformed')
    return encodeResponse({ ...reply, opt: undefined, flags: reply.flags | RCODE.FORMERR })
  // RFC 6891 §6.1.3: we speak EDNS version 0 only.
  if (edns !== undefined && edns.version > 0) {
    return encodeResponse({
      ...reply,
      question: query.question.wire,
      opt: { udpPayloadSize: MAX_UDP_PAYLOAD, extendedRcode: BADVERS_EXTENDED },
    })
  }
  const zoneLabels = zone.apex.split('.')
  const { type, labels } = query.question
  // Not ours (another class or name) or a zone transfer, which is not offered: REFUSED, not
  // authoritative (RFC 1035 §4.1.1; zone transfers, RFC 5936, would need the whole zone).
  if (
    query.question.class !== CLASS_IN ||
    !inZone(labels, zoneLabels) ||
    type === TYPE.AXFR ||
    type === TYPE.IXFR
  ) {
    return fail(RCODE.REFUSED)
  }

  let sections: Sections
  try {
    sections = await resolveInZone(query, zone, zoneLabels.length)
  } catch (error) {
    zone.logger?.warn('hosted DNS lookup failed', { name: labels.join('.'), error: String(error) })
    return fail(RCODE.SERVFAIL)
  }
  const full = { ...reply, flags: reply.flags | FLAG.AA | sections.rcode, question: query.question.wire }
  let message: Buffer
  try {
    message = encodeResponse({ ...full, answers: sections.answers, authorities: sections.authorities })
  } catch (error) {
    // A record above 65535 bytes of RDATA cannot be encoded at all.
    zone.logger?.warn('hosted DNS answer cannot be encoded', { name: labels.join('.'), error: String(error) })
    return fail(RCODE.SERVFAIL)
  }
  const limit =
    transport === 'tcp'
      ? MAX_TCP_MESSAGE
      : Math.min(Math.max(edns?.udpPayloadSize ?? CLASSIC_UDP_PAYLOAD, CLASSIC_UDP_PAYLOAD), MAX_UDP_PAYLOAD)
  if (message.length <= limit) return message
  if (transport === 'tcp') {
    zone.logger?.warn('hosted DNS answer exceeds 65535 bytes', {
      name: labels.join('.'),
      bytes: message.length,
    })
    return fail(RCODE.SERVFAIL)
  }
  // RFC 2181 §9 / RFC 7766 §5: rather than a partial RRset, TC=1 with empty sections sends the
  // client to TCP; the OPT record stays so the client still sees our EDNS support.
  return encodeResponse({ ...full, flags: full.flags | FLAG.TC })
}
