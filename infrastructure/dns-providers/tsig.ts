// TSIG (RFC 8945): HMAC signatures on DNS messages with a shared secret, implemented here over the
// wire with Web Crypto because dns-packet neither signs nor verifies. Used to sign UPDATEs, queries
// and zone transfers, and — as important — to verify that answers come from the server holding the
// key, so a forged NOERROR cannot make us believe a record was published.

import { encodeName, lastAdditionalOffset, readName, TYPE_CODES } from './dns-wire.ts'

export type TsigAlgorithm = 'hmac-sha1' | 'hmac-sha256' | 'hmac-sha384' | 'hmac-sha512'

export interface TsigKey {
  /** The key's name, as configured on the server (`dmarcwatch.` or `dmarcwatch`). */
  name: string
  algorithm: TsigAlgorithm
  /** The shared secret, base64 (as `tsig-keygen`, `keymgr` and `pdnsutil` print it). */
  secret: string
}

// RFC 8945 §6 algorithm names and the Web Crypto hash behind each (HMAC-MD5 is left out: Web Crypto
// has no MD5, and RFC 8945 §6 no longer recommends it).
const HASHES: Record<TsigAlgorithm, string> = {
  'hmac-sha1': 'SHA-1',
  'hmac-sha256': 'SHA-256',
  'hmac-sha384': 'SHA-384',
  'hmac-sha512': 'SHA-512',
}
const MAC_BYTES: Record<TsigAlgorithm, number> = {
  'hmac-sha1': 20,
  'hmac-sha256': 32,
  'hmac-sha384': 48,
  'hmac-sha512': 64,
}
/** TSIG error codes (RFC 8945 §3). */
export const TSIG_ERRORS: Record<number, string> = {
  16: 'BADSIG',
  17: 'BADKEY',
  18: 'BADTIME',
  22: 'BADTRUNC',
}
// RFC 8945 §10 recommends 300 seconds of allowed clock skew.
export const DEFAULT_FUDGE = 300
const CLASS_ANY = 255

export interface TsigRecord {
  /** Where the TSIG RR starts: everything before it is the message that was signed. */
  start: number
  keyName: string
  algorithm: string
  timeSigned: number
  fudge: number
  mac: Buffer
  originalId: number
  error: number
  otherData: Buffer
}

export type TsigCheck =
  | { status: 'verified'; mac: Buffer }
  | { status: 'unsigned' }
  /** `error` is the TSIG error name (BADSIG, BADKEY, BADTIME, BADTRUNC) or a description. */
  | { status: 'failed'; error: string; serverError: boolean }

const u16 = (value: number) => {
  const b = Buffer.alloc(2)
  b.writeUInt16BE(value)
  return b
}
/** RFC 8945 §4.2: Time Signed is a 48-bit count of seconds since the epoch. */
const u48 = (value: number) => {
  const b = Buffer.alloc(6)
  b.writeUIntBE(value, 0, 6)
  return b
}
const lengthPrefixed = (bytes: Buffer) => Buffer.concat([u16(bytes.length), bytes])

async function hmacKey(key: TsigKey): Promise<CryptoKey> {
  const hash = HASHES[key.algorithm]
  if (!hash) throw new Error(`unsupported TSIG algorithm ${key.algorithm}`)
  const secret = Buffer.from(key.secret, 'base64')
  if (secret.length === 0) throw new Error('the TSIG secret is empty or not base64')
  return crypto.subtle.importKey('raw', secret, { name: 'HMAC', hash }, false, ['sign', 'verify'])
}

/** The TSIG RR at the end of the message, or null when there is none (RFC 8945 §5.1: it is last). */
export function readTsig(message: Buffer): TsigRecord | null {
  const start = lastAdditionalOffset(message)
  if (start === null) return null
  const owner = readName(message, start)
  if (message.readUInt16BE(owner.end) !== TYPE_CODES.TSIG) return null
  let at = owner.end + 10
  const algorithm = readName(message, at)
  at = algorithm.end
  const timeSigned = message.readUIntBE(at, 6)
  const fudge = message.readUInt16BE(at + 6)
  const macSize = message.readUInt16BE(at + 8)
  const mac = message.subarray(at + 10, at + 10 + macSize)
  at += 10 + macSize
  const otherLen = message.readUInt16BE(at + 4)
  return {
    start,
    keyName: owner.name,
    algorithm: algorithm.name,
    timeSigned,
    fudge,
    mac: Buffer.from(mac),
    originalId: message.readUInt16BE(at),
    error: message.readUInt16BE(at + 2),
    otherData: Buffer.from(message.subarray(at + 6, at + 6 + otherLen)),
  }
}

/**
 * RFC 8945 §4.3.3 "DNS Message": the message as it was before the TSIG RR was added — the RR cut
 * off, ARCOUNT decremented, and the original ID put back in case a forwarder changed it.
 */
function unsignedPart(message: Buffer, tsig: TsigRecord): Buffer {
  const copy = Buffer.from(message.subarray(0, tsig.start))
  copy.writeUInt16BE(tsig.originalId, 0)
  copy.writeUInt16BE(copy.readUInt16BE(10) - 1, 10)
  return copy
}

/** RFC 8945 §4.3.3 "TSIG Variables", names in canonical (lower-case, uncompressed) form. */
function variables(
  keyName: string,
  algorithm: string,
  time: number,
  fudge: number,
  error: number,
  other: Buffer,
) {
  return Buffer.concat([
    encodeName(keyName),
    u16(CLASS_ANY),
    Buffer.alloc(4), // TTL 0
    encodeName(algorithm),
    u48(time),
    u16(fudge),
    u16(error),
    lengthPrefixed(other),
  ])
}

/**
 * Appends a TSIG RR to a message (RFC 8945 §5.1). The MAC covers the message and the TSIG variables
 * (§4.3.1); the returned MAC is needed to verify the answer, whose digest starts with it (§4.3.2).
 */
export async function signMessage(
  message: Buffer,
  key: TsigKey,
  nowSeconds: number,
  fudge = DEFAULT_FUDGE,
): Promise<{ wire: Buffer; mac: Buffer }> {
  const time = Math.floor(nowSeconds)
  const digest = Buffer.concat([message, variables(key.name, key.algorithm, time, fudge, 0, Buffer.alloc(0))])
  const mac = Buffer.from(await crypto.subtle.sign('HMAC', await hmacKey(key), digest))
  const rdata = Buffer.concat([
    encodeName(key.algorithm),
    u48(time),
    u16(fudge),
    lengthPrefixed(mac),
    u16(message.readUInt16BE(0)), // Original ID
    u16(0), // Error
    u16(0), // Other Len
  ])
  const record = Buffer.concat([
    encodeName(key.name),
    u16(TYPE_CODES.TSIG!),
    u16(CLASS_ANY),
    Buffer.alloc(4),
    lengthPrefixed(rdata),
  ])
  const wire = Buffer.concat([message, record])
  wire.writeUInt16BE(message.readUInt16BE(10) + 1, 10)
  return { wire, mac }
}

function sameName(a: string, b: string): boolean {
  return a.toLowerCase().replace(/\.$/, '') === b.toLowerCase().replace(/\.$/, '')
}

/** Key, algorithm and error checks shared by single answers and message streams (RFC 8945 §5.4.1). */
function precheck(tsig: TsigRecord, key: TsigKey): TsigCheck | null {
  if (tsig.error !== 0) {
    return {
      status: 'failed',
      error: TSIG_ERRORS[tsig.error] ?? `TSIG error ${tsig.error}`,
      serverError: true,
    }
  }
  if (!sameName(tsig.keyName, key.name) || !sameName(tsig.algorithm, key.algorithm)) {
    return { status: 'failed', error: `answer signed with another key (${tsig.keyName})`, serverError: false }
  }
  // We never ask for truncated MACs, so a shorter one is not ours (RFC 8945 §5.2.2.1, §5.4.4).
  if (tsig.mac.length !== MAC_BYTES[key.algorithm]) {
    return { status: 'failed', error: 'BADTRUNC', serverError: false }
  }
  return null
}

async function checkMac(
  key: TsigKey,
  tsig: TsigRecord,
  digest: Buffer,
  nowSeconds: number,
): Promise<TsigCheck> {
  // crypto.subtle.verify compares in constant time.
  const valid = await crypto.subtle.verify(
    'HMAC',
    await hmacKey(key),
    new Uint8Array(tsig.mac),
    new Uint8Array(digest),
  )
  if (!valid) {
    return { status: 'failed', error: 'BADSIG', serverError: false }
  }
  // RFC 8945 §5.4.3: the time is checked after the MAC, and only a signed time is trusted.
  if (Math.abs(Math.floor(nowSeconds) - tsig.timeSigned) > tsig.fudge) {
    return { status: 'failed', error: 'BADTIME', serverError: false }
  }
  return { status: 'verified', mac: tsig.mac }
}

/** Verifies the answer to a signed request (RFC 8945 §5.4): the request MAC leads the digest. */
export async function verifyAnswer(
  message: Buffer,
  key: TsigKey,
  requestMac: Buffer,
  nowSeconds: number,
): Promise<TsigCheck> {
  const tsig = readTsig(message)
  if (tsig === null) return { status: 'unsigned' }
  const problem = precheck(tsig, key)
  if (problem) return problem
  const digest = Buffer.concat([
    lengthPrefixed(requestMac),
    unsignedPart(message, tsig),
    variables(tsig.keyName, tsig.algorithm, tsig.timeSigned, tsig.fudge, tsig.error, tsig.otherData),
  ])
  return checkMac(key, tsig, digest, nowSeconds)
}

/**
 * Verifies the messages of one TCP answer stream, e.g. a zone transfer (RFC 8945 §5.3.1): the first
 * is an ordinary signed answer; later ones may be unsigned, but a signed one covers the prior MAC,
 * every unsigned message since, itself, and only the TSIG timers. At most 99 in a row may be
 * unsigned, and the stream is only complete once its last message was signed.
 */
export function createTsigStream(key: TsigKey, requestMac: Buffer, now: () => number) {
  let prior: Buffer | null = null
  let pending: Buffer[] = []
  return {
    async next(message: Buffer): Promise<TsigCheck | { status: 'pending' }> {
      if (prior === null) {
        const first = await verifyAnswer(message, key, requestMac, now())
        if (first.status === 'verified') prior = first.mac
        return first
      }
      const tsig = readTsig(message)
      if (tsig === null) {
        pending.push(message)
        if (pending.length >= 100)
          return { status: 'failed', error: 'too many unsigned messages', serverError: false }
        return { status: 'pending' }
      }
      const problem = precheck(tsig, key)
      if (problem) return problem
      const digest = Buffer.concat([
        lengthPrefixed(prior),
        ...pending,
        unsignedPart(message, tsig),
        u48(tsig.timeSigned),
        u16(tsig.fudge),
      ])
      const result = await checkMac(key, tsig, digest, now())
      if (result.status === 'verified') {
        prior = result.mac
        pending = []
      }
      return result
    },
    /** True when every message so far is covered by a verified signature. */
    complete(): boolean {
      return prior !== null && pending.length === 0
    },
  }
}
