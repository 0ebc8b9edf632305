import { describe, expect, test } from 'bun:test'
import { type DkimKeyParseResult, parseDkimKeyRecord } from '../../../domain/dkim/key-record.ts'
import { decodeBase64, inspectPublicKey } from '../../../domain/dkim/public-key.ts'
import {
  ED25519_RAW,
  ED25519_SPKI,
  RSA_512_SPKI,
  RSA_1024_SPKI,
  RSA_2048_PKCS1,
  RSA_2048_SPKI,
} from './keys.ts'

const codes = (result: DkimKeyParseResult) => result.findings.map((finding): string => finding.code)

function parsed(txt: string) {
  const result = parseDkimKeyRecord(txt)
  if (!result.ok) throw new Error(`expected a usable record: ${JSON.stringify(result.findings)}`)
  return result
}

/** DER of a PKCS#1 RSAPublicKey whose modulus has exactly `bits` bits, exponent 65537. */
function pkcs1WithModulusBits(bits: number): Uint8Array {
  const bytes = Math.ceil(bits / 8)
  const modulus = new Uint8Array(bytes).fill(0xff)
  modulus[0] = 0xff >> (bytes * 8 - bits)
  const integer = (content: Uint8Array) => {
    const body = content[0]! & 0x80 ? Uint8Array.of(0, ...content) : content
    return Uint8Array.of(0x02, ...length(body.length), ...body)
  }
  const length = (n: number) => (n < 128 ? [n] : [0x82, n >> 8, n & 0xff])
  const content = Uint8Array.of(...integer(modulus), ...integer(Uint8Array.of(1, 0, 1)))
  return Uint8Array.of(0x30, ...length(content.length), ...content)
}

describe('parseDkimKeyRecord: keys', () => {
  test('a 2048-bit RSA key in SubjectPublicKeyInfo is fine', () => {
    const result = parsed(`v=DKIM1; k=rsa; p=${RSA_2048_SPKI}`)
    expect(result.record).toMatchObject({
      version: 'DKIM1',
      keyType: 'rsa',
      revoked: false,
      key: { type: 'rsa', bits: 2048, exponent: 65537, encoding: 'spki' },
      hashAlgorithms: null,
      serviceTypes: ['*'],
    })
    expect(result.findings).toEqual([])
  })

  test('k defaults to rsa and v is optional', () => {
    expect(parsed(`p=${RSA_2048_SPKI}`).record).toMatchObject({ version: null, keyType: 'rsa' })
  })

  test('a 1024-bit key is accepted below the recommended size (RFC 8301 §3.2)', () => {
    const result = parsed(`v=DKIM1; p=${RSA_1024_SPKI}`)
    expect(result.record.key).toMatchObject({ type: 'rsa', bits: 1024 })
    expect(result.findings).toMatchObject([{ code: 'rsa_key_below_recommended', severity: 'medium' }])
  })

  test('a 512-bit key is too short to be valid (RFC 8301 §3.2)', () => {
    const result = parsed(`v=DKIM1; p=${RSA_512_SPKI}`)
    expect(result.record.key).toMatchObject({ type: 'rsa', bits: 512 })
    expect(result.findings).toMatchObject([{ code: 'rsa_key_too_short', severity: 'critical' }])
  })

  test('a bare PKCS#1 RSAPublicKey is read, and flagged', () => {
    const result = parsed(`v=DKIM1; k=rsa; p=${RSA_2048_PKCS1}`)
    expect(result.record.key).toEqual({ type: 'rsa', bits: 2048, exponent: 65537, encoding: 'pkcs1' })
    expect(codes(result)).toEqual(['rsa_pkcs1_encoding'])
  })

  test('an Ed25519 key as the bare 32 bytes of RFC 8463', () => {
    const result = parsed(`v=DKIM1; k=ed25519; p=${ED25519_RAW}`)
    expect(result.record.key).toEqual({ type: 'ed25519', bits: 256, encoding: 'raw' })
    expect(result.findings).toEqual([])
  })

  test('an Ed25519 key wrapped in SubjectPublicKeyInfo is read but flagged', () => {
    const result = parsed(`v=DKIM1; k=ed25519; p=${ED25519_SPKI}`)
    expect(result.record.key).toEqual({ type: 'ed25519', bits: 256, encoding: 'spki' })
    expect(codes(result)).toEqual(['ed25519_spki_encoding'])
  })

  test('a key of the wrong type for k= is unusable', () => {
    expect(codes(parseDkimKeyRecord(`v=DKIM1; k=ed25519; p=${RSA_2048_SPKI}`))).toEqual(['key_type_mismatch'])
    expect(codes(parseDkimKeyRecord(`v=DKIM1; p=${ED25519_SPKI}`))).toEqual(['key_type_mismatch'])
  })

  test('an empty p= is a revoked key', () => {
    const result = parsed('v=DKIM1; k=rsa; p=')
    expect(result.record.revoked).toBe(true)
    expect(result.record.key).toBeNull()
    expect(codes(result)).toEqual(['key_revoked'])
  })

  test('whitespace inside p= is ignored (RFC 6376 §3.6.1)', () => {
    const spaced = RSA_2048_SPKI.replace(/(.{64})/g, '$1 ')
    expect(parsed(`v=DKIM1; p=${spaced}`).record.key).toMatchObject({ bits: 2048 })
  })

  test.each([
    ['p=!!!notbase64!!!', 'invalid_base64'],
    ['p=QUJD', 'invalid_key'],
    [`p=${RSA_2048_SPKI.slice(0, 200)}`, 'invalid_key'],
    ['p=MAsGCSqGSIb3DQEBAQMAAA==', 'invalid_key'],
  ])('garbage key %p -> %s', (tags, code) => {
    const result = parseDkimKeyRecord(`v=DKIM1; ${tags}`)
    expect(result.ok).toBe(false)
    expect(codes(result)).toEqual([code])
  })

  test('modulus bit lengths are exact, and keys above 4096 bits are flagged', () => {
    for (const bits of [1023, 2047, 2048, 3072, 4096, 4097]) {
      const key = inspectPublicKey(pkcs1WithModulusBits(bits))
      expect(key.ok && key.key.type === 'rsa' && key.key.bits).toBe(bits)
    }
    const big = btoa(String.fromCharCode(...pkcs1WithModulusBits(4104)))
    expect(codes(parseDkimKeyRecord(`p=${big}`))).toEqual(['rsa_key_very_large', 'rsa_pkcs1_encoding'])
  })

  test('decodeBase64 rejects impossible lengths and stray characters', () => {
    expect(decodeBase64('QUJD')).toEqual(Uint8Array.of(65, 66, 67))
    expect(decodeBase64('QUJDR')).toBeNull()
    expect(decodeBase64('QU*D')).toBeNull()
  })
})

describe('parseDkimKeyRecord: tags', () => {
  const key = `p=${RSA_2048_SPKI}`

  test('h=sha1 only is weak (RFC 8301 §3.1)', () => {
    const result = parsed(`v=DKIM1; h=sha1; ${key}`)
    expect(result.record.hashAlgorithms).toEqual(['sha1'])
    expect(result.findings).toMatchObject([{ code: 'sha1_only', severity: 'high' }])
  })

  test('h=sha1:sha256 is fine, unknown hashes are noted', () => {
    expect(parsed(`v=DKIM1; h=sha1:sha256; ${key}`).findings).toEqual([])
    expect(codes(parsed(`v=DKIM1; h=sha256:md5; ${key}`))).toEqual(['unknown_hash_algorithm'])
  })

  test('flags, services and notes are read', () => {
    const result = parsed(`v=DKIM1; t=y:s; s=email; n=rotated 2024; ${key}`)
    expect(result.record).toMatchObject({
      testing: true,
      strict: true,
      serviceTypes: ['email'],
      notes: 'rotated 2024',
    })
    expect(codes(result)).toEqual(['testing_flag'])
  })

  test('a service type without email or * cannot sign mail', () => {
    expect(codes(parsed(`v=DKIM1; s=tlsrpt; ${key}`))).toEqual(['service_type_excludes_email'])
  })

  test.each([
    ['', 'empty_record'],
    ['v=DKIM2; p=', 'invalid_version'],
    ['v=dkim1; p=', 'invalid_version'],
    ['v=DKIM1; k=dsa; p=abc', 'unknown_key_type'],
    ['v=DKIM1; k=rsa', 'missing_key'],
    ['v=DKIM1; p=; p=', 'duplicate_tag'],
    ['v=DKIM1; nonsense; p=', 'invalid_tag_syntax'],
  ])('%p is unusable: %s', (txt, code) => {
    const result = parseDkimKeyRecord(txt)
    expect(result.ok).toBe(false)
    expect(codes(result)).toContain(code)
  })

  test('tag names are case-sensitive', () => {
    const result = parseDkimKeyRecord(`v=DKIM1; P=${RSA_2048_SPKI}`)
    expect(result.ok).toBe(false)
    expect(codes(result)).toEqual(['tag_name_case', 'missing_key'])
  })

  test('v= must come first; unknown tags are ignored', () => {
    expect(codes(parsed(`k=rsa; v=DKIM1; ${key}`))).toEqual(['version_not_first'])
    expect(codes(parsed(`v=DKIM1; x=1; ${key}`))).toEqual(['unknown_tag'])
  })

  test('a trailing semicolon is fine, an empty tag in the middle is noted', () => {
    expect(parsed(`v=DKIM1; ${key};`).findings).toEqual([])
    expect(codes(parsed(`v=DKIM1;; ${key}`))).toEqual(['invalid_tag_syntax'])
  })
})
