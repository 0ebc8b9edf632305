import type { Finding, Severity } from '../shared/finding.ts'
import { decodeBase64, inspectPublicKey, type PublicKeyInfo } from './public-key.ts'

// The DKIM key record (RFC 6376 §3.6.1) in the tag-list syntax of RFC 6376 §3.2, judged against
// RFC 8301 (key sizes, SHA-1) and RFC 8463 (Ed25519).

export type DkimRecordCode =
  | 'empty_record'
  | 'invalid_tag_syntax'
  | 'duplicate_tag'
  | 'unknown_tag'
  | 'tag_name_case'
  | 'invalid_version'
  | 'version_not_first'
  | 'unknown_key_type'
  | 'missing_key'
  | 'key_revoked'
  | 'invalid_base64'
  | 'invalid_key'
  | 'key_type_mismatch'
  | 'rsa_key_too_short'
  | 'rsa_key_below_recommended'
  | 'rsa_key_very_large'
  | 'rsa_pkcs1_encoding'
  | 'ed25519_spki_encoding'
  | 'sha1_only'
  | 'unknown_hash_algorithm'
  | 'service_type_excludes_email'
  | 'testing_flag'

export type DkimFinding = Finding<DkimRecordCode>

export interface DkimKeyRecord {
  raw: string
  version: 'DKIM1' | null
  keyType: 'rsa' | 'ed25519'
  /** An empty p= means the key has been revoked (RFC 6376 §3.6.1). */
  revoked: boolean
  /** What the key bytes turned out to be; null when revoked. */
  key: PublicKeyInfo | null
  /** h=: acceptable hash algorithms, null when absent (all allowed). */
  hashAlgorithms: string[] | null
  /** s=: service types, default `*`. */
  serviceTypes: string[]
  /** t=y: the domain is testing DKIM; verifiers must not treat failures differently (RFC 6376 §3.6.1). */
  testing: boolean
  /** t=s: the i= domain must equal d=, not be a subdomain of it. */
  strict: boolean
  notes: string | null
  /** Every tag as published; DKIM tag names are case-sensitive (RFC 6376 §3.2). */
  tags: Record<string, string>
}

export type DkimKeyParseResult =
  | { ok: true; record: DkimKeyRecord; findings: DkimFinding[] }
  | { ok: false; findings: DkimFinding[] }

const KNOWN_TAGS = new Set(['v', 'h', 'k', 'n', 'p', 's', 't'])
// RFC 6376 §3.2: tag-name = ALPHA *ALNUMPUNC, ALNUMPUNC = ALPHA / DIGIT / "_"
const TAG_NAME = /^[A-Za-z][A-Za-z0-9_]*$/
const MIN_RSA_BITS = 1024
const RECOMMENDED_RSA_BITS = 2048
const MAX_REQUIRED_RSA_BITS = 4096

/** Whether a TXT string at `<selector>._domainkey` is meant as a DKIM key record (v=DKIM1 or a p= tag). */
export function isDkimKeyRecordText(txt: string): boolean {
  return /^\s*v\s*=\s*DKIM1\s*(;|$)/.test(txt) || /(^|;)\s*p\s*=/.test(txt)
}

export function parseDkimKeyRecord(txt: string): DkimKeyParseResult {
  const findings: DkimFinding[] = []
  const add = (code: DkimRecordCode, severity: Severity, message: string) =>
    findings.push({ code, severity, message })
  const fail = (): DkimKeyParseResult => ({ ok: false, findings })
  if (txt.trim() === '') {
    add('empty_record', 'critical', 'The key record is empty.')
    return fail()
  }

  const tags: Record<string, string> = {}
  const order: string[] = []
  const segments = txt.split(';')
  for (const [index, segment] of segments.entries()) {
    const trimmed = segment.trim()
    if (trimmed === '') {
      // RFC 6376 §3.2 allows one trailing ";" only; an empty tag elsewhere is a harmless slip.
      if (index < segments.length - 1) add('invalid_tag_syntax', 'low', 'The record has an empty tag (";;").')
      continue
    }
    const eq = trimmed.indexOf('=')
    const name = eq < 0 ? '' : trimmed.slice(0, eq).trim()
    if (!TAG_NAME.test(name)) {
      add('invalid_tag_syntax', 'high', `"${trimmed}" is not a tag=value pair.`)
      return fail()
    }
    if (name in tags) {
      // RFC 6376 §3.2: a repeated tag name makes the entire tag-list invalid.
      add(
        'duplicate_tag',
        'critical',
        `The tag "${name}" appears twice, which makes the whole record invalid.`,
      )
      return fail()
    }
    tags[name] = trimmed.slice(eq + 1).trim()
    order.push(name)
    if (!KNOWN_TAGS.has(name)) {
      if (KNOWN_TAGS.has(name.toLowerCase())) {
        add(
          'tag_name_case',
          'high',
          `"${name}=" is not "${name.toLowerCase()}=": DKIM tag names are case-sensitive.`,
        )
      } else add('unknown_tag', 'info', `The tag "${name}" is not defined; verifiers ignore it.`)
    }
  }

  // RFC 6376 §3.6.1 v=: if present it MUST be "DKIM1" and the first tag; otherwise discard the record.
  if (tags.v !== undefined) {
    if (tags.v !== 'DKIM1') {
      add('invalid_version', 'critical', `v="${tags.v}" is not DKIM1; verifiers discard this record.`)
      return fail()
    }
    if (order[0] !== 'v') add('version_not_first', 'medium', 'v=DKIM1 must be the first tag of the record.')
  }
  // RFC 6376 §3.6.1 k=: default rsa; RFC 8463 adds ed25519; unknown key types make the key unusable.
  const keyType = (tags.k ?? 'rsa').toLowerCase()
  if (keyType !== 'rsa' && keyType !== 'ed25519') {
    add('unknown_key_type', 'high', `k="${tags.k}" is not a key type verifiers know (rsa, ed25519).`)
    return fail()
  }
  if (tags.p === undefined) {
    add('missing_key', 'critical', 'The record has no p= tag, which is required.')
    return fail()
  }

  const keyData = tags.p.replace(/\s+/g, '')
  let key: PublicKeyInfo | null = null
  if (keyData === '') {
    add('key_revoked', 'medium', 'p= is empty: the key is revoked and signatures with this selector fail.')
  } else {
    const bytes = decodeBase64(keyData)
    if (bytes === null || bytes.length === 0) {
      add('invalid_base64', 'critical', 'p= is not valid base64.')
      return fail()
    }
    const inspected = inspectPublicKey(bytes, keyType)
    if (!inspected.ok) {
      add('invalid_key', 'critical', inspected.reason)
      return fail()
    }
    key = inspected.key
    if (key.type !== keyType) {
      add(
        'key_type_mismatch',
        'critical',
        `k=${keyType} but p= holds an ${key.type} key; verification fails.`,
      )
      return fail()
    }
    judgeKey(key, add)
  }

  const hashAlgorithms = tags.h === undefined ? null : list(tags.h)
  if (hashAlgorithms !== null) judgeHashes(hashAlgorithms, add)
  const serviceTypes = tags.s === undefined ? ['*'] : list(tags.s)
  if (!serviceTypes.includes('*') && !serviceTypes.includes('email')) {
    add(
      'service_type_excludes_email',
      'high',
      `s=${tags.s} does not include email or *; the key cannot sign mail.`,
    )
  }
  const flags = tags.t === undefined ? [] : list(tags.t)
  const testing = flags.includes('y')
  if (testing)
    add('testing_flag', 'low', 't=y: the domain is testing DKIM and verifiers may disregard results.')

  const record: DkimKeyRecord = {
    raw: txt,
    version: tags.v === undefined ? null : 'DKIM1',
    keyType,
    revoked: keyData === '',
    key,
    hashAlgorithms,
    serviceTypes,
    testing,
    strict: flags.includes('s'),
    notes: tags.n ?? null,
    tags,
  }
  return { ok: true, record, findings }
}

type Add = (code: DkimRecordCode, severity: Severity, message: string) => void

function judgeKey(key: PublicKeyInfo, add: Add) {
  if (key.type === 'ed25519') {
    if (key.encoding === 'spki') {
      add(
        'ed25519_spki_encoding',
        'high',
        'The Ed25519 key is wrapped in SubjectPublicKeyInfo; RFC 8463 §4.2 requires the bare 32-byte key.',
      )
    }
    return
  }
  if (key.bits < MIN_RSA_BITS) {
    // RFC 8301 §3.2: verifiers MUST NOT consider signatures with RSA keys under 1024 bits valid.
    add(
      'rsa_key_too_short',
      'critical',
      `The RSA key has ${key.bits} bits; verifiers reject keys under 1024 bits.`,
    )
  } else if (key.bits < RECOMMENDED_RSA_BITS) {
    // RFC 8301 §3.2: signers SHOULD use at least 2048 bits.
    add('rsa_key_below_recommended', 'medium', `The RSA key has ${key.bits} bits; 2048 bits are recommended.`)
  } else if (key.bits > MAX_REQUIRED_RSA_BITS) {
    // RFC 8301 §3.2: verifiers MUST handle 1024 to 4096 bits and only MAY handle more.
    add('rsa_key_very_large', 'low', `The RSA key has ${key.bits} bits; verifiers need only support 4096.`)
  }
  if (key.encoding === 'pkcs1') {
    add(
      'rsa_pkcs1_encoding',
      'medium',
      'The key is a bare PKCS#1 RSAPublicKey; common verifiers (OpenSSL-based) expect SubjectPublicKeyInfo.',
    )
  }
}

function judgeHashes(hashes: readonly string[], add: Add) {
  for (const hash of hashes) {
    if (hash !== 'sha1' && hash !== 'sha256') {
      add('unknown_hash_algorithm', 'low', `h= lists "${hash}", which is not a DKIM hash algorithm.`)
    }
  }
  if (!hashes.includes('sha256')) {
    // RFC 8301 §3.1: rsa-sha1 MUST NOT be used for signing or verifying, so an h= without sha256
    // leaves no hash a modern verifier accepts.
    add(
      'sha1_only',
      'high',
      `h=${hashes.join(':')} excludes sha256; RFC 8301 verifiers reject SHA-1 signatures.`,
    )
  }
}

function list(value: string): string[] {
  return value
    .split(':')
    .map((item) => item.trim().toLowerCase())
    .filter((item) => item !== '')
}
