// Any server that accepts DNS UPDATE (RFC 2136) signed with TSIG (RFC 8945): BIND, Knot, PowerDNS,
// and most self-hosted DNS. Writes are one UPDATE message each, which the server applies all or
// nothing (RFC 2136 §3.4); reads are an ordinary query for one name and type, or a TSIG-signed zone
// transfer (AXFR, RFC 5936) otherwise. Every answer's TSIG is verified before it is believed.
//
// RFC 2136 has no way to list zones or to log in: listZones returns the configured zones, and
// authenticate sends an UPDATE whose only prerequisite is that the zone's SOA exists (RFC 2136
// §2.4.1) and which changes nothing — it proves the key is known and allowed to update each zone.

import * as packet from 'dns-packet'
import {
  type DnsProvider,
  type ProviderResult,
  providerFail,
  providerOk,
  type RecordFilter,
  type RecordSet,
  type Zone,
} from '../../domain/dns-providers/ports.ts'
import {
  filterRecordSets,
  isInZone,
  normalizeName,
  sortRecordSets,
  validateRecordSet,
  type WritableType,
} from '../../domain/dns-providers/record-set.ts'
import { answers, type DnsEndpoint, tcpExchange, udpExchange } from './dns-exchange.ts'
import {
  buildQuery,
  buildUpdate,
  CLASS_IN,
  deleteRRset,
  encodeRdata,
  presentValue,
  rrsetPrerequisite,
  TYPE_CODES,
  type WireRecord,
} from './dns-wire.ts'
import {
  createTsigStream,
  DEFAULT_FUDGE,
  signMessage,
  type TsigCheck,
  type TsigKey,
  verifyAnswer,
} from './tsig.ts'
import { fail, interpret, rcodeName } from './update-verdict.ts'

export interface Rfc2136Options {
  /** The primary server that accepts updates (port 53 by default). */
  server: { host: string; port?: number }
  /** The zones the key may update: RFC 2136 cannot list them. */
  zones: string[]
  key: TsigKey
  /** `tcp` (default) or `udp`; UDP falls back to TCP for messages over 512 bytes and truncated answers. */
  transport?: 'tcp' | 'udp'
  /** Per exchange, in milliseconds (default 5000). */
  timeoutMs?: number
  /** Allowed clock skew in seconds, sent in every TSIG (default 300, RFC 8945 §10). */
  fudge?: number
  /** The clock for TSIG times, in milliseconds like Date.now (tests skew it). */
  now?: () => number
  /** Source of message ids (default Web Crypto). */
  random?: (length: number) => Uint8Array
}

// Types checked absent before a CNAME is written (the ones a mail domain's names usually hold).
const CNAME_EXCLUDES = ['A', 'AAAA', 'MX', 'TXT', 'NS', 'SRV', 'CAA', 'PTR']
// RFC 1035 §4.2.1: without EDNS a UDP message is at most 512 bytes.
const UDP_LIMIT = 512

interface Reply {
  decoded: packet.DecodedPacket
  rcode: number
  check: TsigCheck
}

const rcodeOf = (message: Buffer) => message.readUInt16BE(2) & 0xf

export function createRfc2136Provider(options: Rfc2136Options): DnsProvider {
  const server: DnsEndpoint = { host: options.server.host, port: options.server.port ?? 53 }
  const zones = options.zones.map(normalizeName)
  const timeoutMs = options.timeoutMs ?? 5000
  const fudge = options.fudge ?? DEFAULT_FUDGE
  const nowSeconds = () => (options.now ?? Date.now)() / 1000
  const random = options.random ?? ((length: number) => crypto.getRandomValues(new Uint8Array(length)))
  const newId = () => {
    const bytes = random(2)
    return ((bytes[0] ?? 0) << 8) | (bytes[1] ?? 0)
  }
  const where = `${server.host}:${server.port}`

  async function exchange(id: number, unsigned: Buffer): Promise<ProviderResult<Reply>> {
    const { wire, mac } = await signMessage(unsigned, options.key, nowSeconds(), fudge)
    let raw: Buffer | null = null
    if (options.transport === 'udp' && wire.length <= UDP_LIMIT) {
      const udp = await udpExchange(server, wire, timeoutMs, (answer) => answers(answer, id))
      if (udp.kind === 'error') return fail('unavailable', `DNS server ${where}: ${udp.reason}`)
      if (udp.kind === 'timeout') return fail('unavailable', `DNS server ${where} did not answer`)
      // A truncated answer cannot carry a verifiable TSIG: ask again over TCP (RFC 7766 §5).
      if ((udp.answer.readUInt16BE(2) & packet.TRUNCATED_RESPONSE) === 0) raw = udp.answer
    }
    if (raw === null) {
      const outcome = await tcpExchange(server, wire, timeoutMs, (answer) => {
        if (!answers(answer, id)) return false
        raw = answer
        return true
      })
      if (outcome.kind === 'timeout') return fail('unavailable', `DNS server ${where} did not answer`)
      if (outcome.kind === 'error') return fail('unavailable', `DNS server ${where}: ${outcome.reason}`)
    }
    // Set inside the callback, which TypeScript cannot follow; a 'done' outcome means it is set.
    const message = raw as unknown as Buffer
    try {
      const check = await verifyAnswer(message, options.key, mac, nowSeconds())
      return providerOk({ decoded: packet.decode(message), rcode: rcodeOf(message), check })
    } catch (error) {
      return fail('unavailable', `DNS server ${where} sent an unreadable answer: ${error}`)
    }
  }

  async function update(zone: string, prerequisites: WireRecord[], updates: WireRecord[], what: string) {
    const id = newId()
    const reply = await exchange(id, buildUpdate(id, zone, prerequisites, updates))
    if (!reply.ok) return reply
    const verdict = interpret(reply.value.rcode, reply.value.check, what)
    // An unsigned NOTAUTH or REFUSED is a key the server could not verify (PowerDNS) or a zone it
    // does not serve, for which Knot DNS checks no key at all. An unsigned SOA query tells them
    // apart: a server that serves the zone answers it authoritatively. Being unsigned, that answer
    // only chooses between two failures; it never turns one into a success.
    if (
      !verdict.ok &&
      verdict.failure.kind === 'bad_credentials' &&
      reply.value.check.status === 'unsigned'
    ) {
      if ((await servesZone(zone)) === false) {
        const code = rcodeName(reply.value.rcode)
        return fail(
          'not_found',
          `${what}: the server does not serve zone ${zone} (${code}, no authoritative SOA)`,
        )
      }
    }
    return verdict
  }

  /** Whether the server answers the zone's SOA authoritatively; null when it cannot be asked. */
  async function servesZone(zone: string): Promise<boolean | null> {
    const id = newId()
    let raw: Buffer | null = null
    const outcome = await tcpExchange(server, buildQuery(id, zone, TYPE_CODES.SOA!), timeoutMs, (answer) => {
      if (!answers(answer, id)) return false
      raw = answer
      return true
    })
    if (outcome.kind !== 'done' || raw === null) return null
    try {
      const message = raw as Buffer
      const decoded = packet.decode(message)
      const soa = (decoded.answers ?? []).some((a) => a.type === 'SOA' && normalizeName(a.name) === zone)
      return rcodeOf(message) === 0 && decoded.flag_aa === true && soa
    } catch {
      return null
    }
  }

  function configured(zone: Zone): ProviderResult<string> {
    const name = normalizeName(zone.name)
    return zones.includes(name)
      ? providerOk(name)
      : providerFail('not_found', `zone ${name} is not configured for ${where} (RFC 2136 cannot list zones)`)
  }

  /** One name and type by an ordinary query; the answer must be authoritative (AA=1). */
  async function query(name: string, type: string): Promise<ProviderResult<RecordSet[]>> {
    const id = newId()
    const reply = await exchange(id, buildQuery(id, name, TYPE_CODES[type]!))
    if (!reply.ok) return reply
    const { rcode, decoded, check } = reply.value
    // NXDOMAIN is an answer here (the set is empty), not an error.
    const verdict = interpret(rcode === 3 ? 0 : rcode, check, `query ${name} ${type}`)
    // A signed REFUSED to a query: the key is fine, the server just does not serve that name.
    if (!verdict.ok && !(rcode === 5 && check.status === 'verified')) return verdict
    if (!verdict.ok || !decoded.flag_aa)
      return providerFail('not_found', `${where} is not authoritative for ${name}`)
    const records = (decoded.answers ?? []).filter((a) => a.type === type && normalizeName(a.name) === name)
    if (records.length === 0) return providerOk([])
    const ttl = (records[0] as { ttl?: number }).ttl ?? 0
    return providerOk([{ name, type, ttl, values: records.map(presentValue) }])
  }

  /** The whole zone by a TSIG-signed AXFR, every message verified (RFC 5936, RFC 8945 §5.3.1). */
  async function transfer(zone: string): Promise<ProviderResult<RecordSet[]>> {
    const id = newId()
    const { wire, mac } = await signMessage(
      buildQuery(id, zone, TYPE_CODES.AXFR!),
      options.key,
      nowSeconds(),
      fudge,
    )
    const stream = createTsigStream(options.key, mac, nowSeconds)
    const sets = new Map<string, RecordSet>()
    let soas = 0
    let failure: ProviderResult<never> | null = null
    const outcome = await tcpExchange(server, wire, timeoutMs, async (message) => {
      if (!answers(message, id)) return false
      const check = await stream.next(message)
      const verdict =
        check.status === 'pending'
          ? providerOk(undefined)
          : interpret(rcodeOf(message), check, `AXFR ${zone}`)
      if (!verdict.ok) {
        failure = verdict
        return true
      }
      for (const record of packet.decode(message).answers ?? []) {
        // The transfer starts and ends with the zone's SOA (RFC 5936 §2.2); the last one is a marker.
        if (record.type === 'SOA' && ++soas === 2) return true
        if (record.type === 'TSIG' || record.type === 'OPT') continue
        const name = normalizeName(record.name)
        const key = `${name} ${record.type}`
        const set = sets.get(key) ?? {
          name,
          type: record.type,
          ttl: (record as { ttl?: number }).ttl ?? 0,
          values: [],
        }
        set.values.push(presentValue(record))
        sets.set(key, set)
      }
      return false
    })
    if (failure) return failure
    if (outcome.kind === 'timeout') return providerFail('unavailable', `AXFR ${zone} from ${where} timed out`)
    if (outcome.kind === 'error')
      return providerFail('unavailable', `AXFR ${zone} from ${where}: ${outcome.reason}`)
    if (!stream.complete())
      return providerFail('unavailable', `AXFR ${zone}: the last message was not signed`)
    return providerOk([...sets.values()])
  }

  return {
    kind: 'rfc2136',

    async authenticate() {
      for (const zone of zones) {
        const verdict = await update(zone, [rrsetPrerequisite(zone, 'SOA', true)], [], `UPDATE ${zone}`)
        if (!verdict.ok) return verdict
      }
      return providerOk({ account: normalizeName(options.key.name) })
    },

    async listZones() {
      return providerOk(zones.map((name) => ({ id: name, name })))
    },

    async readRecords(zone: Zone, filter: RecordFilter = {}) {
      const known = configured(zone)
      if (!known.ok) return known
      const name = filter.name === undefined ? undefined : normalizeName(filter.name)
      const type = filter.type?.toUpperCase()
      if (name !== undefined && !isInZone(name, known.value)) return providerOk([])
      // ANY is not a type to read (RFC 8482), and TSIG/AXFR are not records.
      const direct =
        name !== undefined &&
        type !== undefined &&
        TYPE_CODES[type] &&
        !['ANY', 'AXFR', 'TSIG'].includes(type)
      const sets = direct ? await query(name, type) : await transfer(known.value)
      return sets.ok ? providerOk(sortRecordSets(filterRecordSets(sets.value, filter))) : sets
    },

    async upsertRecordSet(zone: Zone, set: RecordSet) {
      const known = configured(zone)
      if (!known.ok) return known
      const valid = validateRecordSet(known.value, set)
      if (!valid.ok) return valid
      const { name, ttl, values } = valid.value
      const type = valid.value.type as WritableType
      const adds = values.map((value) => ({
        name,
        type: TYPE_CODES[type]!,
        class: CLASS_IN,
        ttl,
        rdata: encodeRdata(type, value),
      }))
      // A server silently ignores (or refuses) data added beside a CNAME and a CNAME added beside
      // other data (RFC 2136 §3.4.2.2). "RRset does not exist" prerequisites (§2.4.3) turn the
      // usual cases into YXRRSET, i.e. a conflict we can report.
      const others = type === 'CNAME' ? CNAME_EXCLUDES : ['CNAME']
      const prerequisites = others.map((other) => rrsetPrerequisite(name, other, false))
      const written = await update(
        known.value,
        prerequisites,
        [deleteRRset(name, type), ...adds],
        `UPDATE ${name} ${type}`,
      )
      if (!written.ok || type !== 'CNAME') return written
      // No prerequisite can say "nothing but a CNAME" (other types exist), so the set is read back.
      const check = await query(name, 'CNAME')
      if (!check.ok) return check
      return check.value[0]?.values[0] === values[0]
        ? written
        : providerFail('conflict', `the server ignored the CNAME at ${name}: other records exist there`)
    },

    async deleteRecordSet(zone: Zone, rawName: string, rawType: string) {
      const known = configured(zone)
      if (!known.ok) return known
      const name = normalizeName(rawName)
      const type = rawType.toUpperCase()
      if (!isInZone(name, known.value))
        return providerFail('invalid', `${name} is not in zone ${known.value}`)
      if (!TYPE_CODES[type] || ['ANY', 'AXFR', 'TSIG'].includes(type))
        return providerFail('invalid', `cannot delete type ${type}`)
      return update(known.value, [], [deleteRRset(name, type)], `UPDATE ${name} ${type}`)
    },
  }
}
