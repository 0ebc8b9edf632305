// Reading a DKIM public key's type and size from its bytes, without platform crypto: a small DER
// walk over SubjectPublicKeyInfo (RFC 5280 §4.1.2.7), a bare PKCS#1 RSAPublicKey (RFC 8017 §A.1.1,
// what RFC 6376 §3.6.1 literally names for k=rsa) or a raw 32-byte Ed25519 key (RFC 8463 §4.2).

export type PublicKeyInfo =
  | { type: 'rsa'; bits: number; exponent: number | null; encoding: 'spki' | 'pkcs1' }
  | { type: 'ed25519'; bits: 256; encoding: 'raw' | 'spki' }

export type PublicKeyParse = { ok: true; key: PublicKeyInfo } | { ok: false; reason: string }

// DER content of the algorithm OIDs: rsaEncryption 1.2.840.113549.1.1.1 and id-Ed25519 1.3.101.112.
const RSA_ENCRYPTION = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01]
const ED25519 = [0x2b, 0x65, 0x70]
const SEQUENCE = 0x30
const INTEGER = 0x02
const BIT_STRING = 0x03
const OID = 0x06

interface Tlv {
  tag: number
  start: number
  end: number
}

/** Decodes base64 after removing whitespace (RFC 6376 §3.6.1 allows FWS inside p=); null if invalid. */
export function decodeBase64(text: string): Uint8Array | null {
  const compact = text.replace(/\s+/g, '')
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) return null
  try {
    const binary = atob(compact)
    return Uint8Array.from(binary, (char) => char.charCodeAt(0))
  } catch {
    return null
  }
}

/** Identifies a DKIM key from its decoded p= bytes; `declared` is the record's k= value. */
export function inspectPublicKey(bytes: Uint8Array, declared?: 'rsa' | 'ed25519'): PublicKeyParse {
  // RFC 8463 §4.2: an Ed25519 DKIM key is the bare 32-byte public key, not wrapped in DER.
  if (bytes.length === 32 && (declared === 'ed25519' || bytes[0] !== SEQUENCE)) {
    return { ok: true, key: { type: 'ed25519', bits: 256, encoding: 'raw' } }
  }
  const outer = readTlv(bytes, 0, bytes.length)
  if (outer === null || outer.tag !== SEQUENCE || outer.end !== bytes.length) {
    return { ok: false, reason: 'The key is not a DER-encoded public key.' }
  }
  const first = readTlv(bytes, outer.start, outer.end)
  if (first?.tag === INTEGER) return readRsaPublicKey(bytes, outer, 'pkcs1')
  if (first?.tag !== SEQUENCE)
    return { ok: false, reason: 'The key is neither SubjectPublicKeyInfo nor RSAPublicKey.' }

  const oid = readTlv(bytes, first.start, first.end)
  const keyBits = readTlv(bytes, first.end, outer.end)
  if (oid === null || oid.tag !== OID || keyBits === null || keyBits.tag !== BIT_STRING) {
    return { ok: false, reason: 'The SubjectPublicKeyInfo structure is malformed.' }
  }
  // The first content octet of a BIT STRING counts unused bits; a key is always whole octets.
  if (bytes[keyBits.start] !== 0) return { ok: false, reason: 'The public key BIT STRING is malformed.' }
  const keyStart = keyBits.start + 1
  const algorithm = bytes.subarray(oid.start, oid.end)
  if (sameBytes(algorithm, RSA_ENCRYPTION)) {
    const inner = readTlv(bytes, keyStart, keyBits.end)
    if (inner === null || inner.tag !== SEQUENCE || inner.end !== keyBits.end) {
      return { ok: false, reason: 'The RSA public key inside SubjectPublicKeyInfo is malformed.' }
    }
    return readRsaPublicKey(bytes, inner, 'spki')
  }
  if (sameBytes(algorithm, ED25519)) {
    if (keyBits.end - keyStart !== 32) return { ok: false, reason: 'An Ed25519 public key must be 32 bytes.' }
    return { ok: true, key: { type: 'ed25519', bits: 256, encoding: 'spki' } }
  }
  return { ok: false, reason: `The key algorithm (OID ${oidText(algorithm)}) is neither RSA nor Ed25519.` }
}

function readRsaPublicKey(bytes: Uint8Array, sequence: Tlv, encoding: 'spki' | 'pkcs1'): PublicKeyParse {
  // RFC 8017 §A.1.1: RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER }
  const modulus = readTlv(bytes, sequence.start, sequence.end)
  const exponent = modulus === null ? null : readTlv(bytes, modulus.end, sequence.end)
  if (modulus?.tag !== INTEGER || exponent?.tag !== INTEGER || exponent.end !== sequence.end) {
    return { ok: false, reason: 'The RSA public key is malformed.' }
  }
  // A DER INTEGER is two's complement: a positive modulus with its top bit set gets a 0x00 prefix.
  let start = modulus.start
  if ((bytes[start] ?? 0) & 0x80) return { ok: false, reason: 'The RSA modulus is negative.' }
  while (start < modulus.end && bytes[start] === 0) start++
  if (start === modulus.end) return { ok: false, reason: 'The RSA modulus is zero.' }
  const bits = (modulus.end - start - 1) * 8 + (32 - Math.clz32(bytes[start]!))
  let value = 0
  const exponentLength = exponent.end - exponent.start
  for (let i = exponent.start; i < exponent.end; i++) value = value * 256 + bytes[i]!
  return {
    ok: true,
    key: { type: 'rsa', bits, exponent: exponentLength <= 6 ? value : null, encoding },
  }
}

function readTlv(bytes: Uint8Array, offset: number, limit: number): Tlv | null {
  if (offset + 2 > limit) return null
  const tag = bytes[offset]!
  let length = bytes[offset + 1]!
  let position = offset + 2
  if (length & 0x80) {
    // Long form: the low bits count the length octets. DNS-sized keys never need more than 4.
    const octets = length & 0x7f
    if (octets === 0 || octets > 4 || position + octets > limit) return null
    length = 0
    for (let i = 0; i < octets; i++) length = length * 256 + bytes[position++]!
  }
  if (position + length > limit) return null
  return { tag, start: position, end: position + length }
}

function sameBytes(actual: Uint8Array, expected: readonly number[]): boolean {
  return actual.length === expected.length && expected.every((byte, i) => actual[i] === byte)
}

function oidText(oid: Uint8Array): string {
  if (oid.length === 0) return '(empty)'
  const parts = [Math.floor(oid[0]! / 40), oid[0]! % 40]
  let value = 0
  for (const byte of oid.subarray(1)) {
    value = value * 128 + (byte & 0x7f)
    if (!(byte & 0x80)) {
      parts.push(value)
      value = 0
    }
  }
  return parts.join('.')
}
