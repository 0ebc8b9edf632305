import type { DnsResolver } from '../dns/ports.ts'
import type { Finding, Severity } from '../shared/finding.ts'
import { lookupVersionedRecord, trimWsp } from './versioned-record.ts'

// SMTP TLS Reporting (RFC 8460 §3): the `_smtp._tls.<domain>` TXT record.

export type TlsRptCode =
  | 'no_record'
  | 'multiple_records'
  | 'lookup_failed'
  | 'not_tlsrpt'
  | 'invalid_field'
  | 'duplicate_rua'
  | 'missing_rua'
  | 'invalid_uri'
  | 'unsupported_uri_scheme'

export type TlsRptFinding = Finding<TlsRptCode>

export interface TlsRptUri {
  uri: string
  scheme: 'mailto' | 'https'
}

export interface TlsRptRecord {
  raw: string
  rua: TlsRptUri[]
  extensions: Record<string, string>
}

export type TlsRptParse =
  | { ok: true; record: TlsRptRecord; findings: TlsRptFinding[] }
  | { ok: false; findings: TlsRptFinding[] }

export type TlsRptLookup =
  | { status: 'found'; name: string; record: TlsRptRecord; findings: TlsRptFinding[] }
  | { status: 'none' | 'invalid' | 'temperror'; name: string; record: null; findings: TlsRptFinding[] }

// RFC 8460 §3: tlsrpt-ext-name = (ALPHA / DIGIT) *31(ALPHA / DIGIT / "_" / "-" / ".")
const EXT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$/
const EXT_VALUE = /^[\x21-\x3a\x3c\x3e-\x7e]+$/
const URI_CHARS = /^(?:[a-z0-9\-._~!$&'()*+;=:@/?#[\]]|%[0-9a-f]{2})+$/i

export function parseTlsRptRecord(txt: string): TlsRptParse {
  const findings: TlsRptFinding[] = []
  const add = (code: TlsRptCode, severity: Severity, message: string) =>
    findings.push({ code, severity, message })
  const fail = (code: TlsRptCode, message: string): TlsRptParse => {
    add(code, 'high', message)
    return { ok: false, findings }
  }
  // RFC 8460 §3: tlsrpt-version = %s"v=TLSRPTv1", case-sensitive, then 1*(field-delim tlsrpt-field).
  if (!/^v=TLSRPTv1[ \t]*;/.test(txt))
    return fail('not_tlsrpt', 'The record does not begin with "v=TLSRPTv1;".')
  let rua: TlsRptUri[] | null = null
  const extensions: Record<string, string> = {}
  const fields = txt.split(';').slice(1)
  for (const [index, raw] of fields.entries()) {
    const field = trimWsp(raw)
    if (field === '' && index === fields.length - 1) continue
    const eq = field.indexOf('=')
    const name = eq < 0 ? '' : field.slice(0, eq)
    const value = field.slice(eq + 1)
    if (name === 'rua') {
      if (rua !== null) {
        add('duplicate_rua', 'medium', 'The record has more than one rua field; reporters may use either.')
        continue
      }
      rua = readUris(value, add)
    } else if (!EXT_NAME.test(name) || !EXT_VALUE.test(value)) {
      return fail('invalid_field', `"${field}" is not a valid field of a TLS-RPT record.`)
    } else extensions[name] ??= value
  }
  if (rua === null) return fail('missing_rua', 'The record has no rua field, which is required.')
  if (rua.length === 0) return fail('invalid_uri', 'rua lists no usable mailto: or https: URI.')
  return { ok: true, record: { raw: txt, rua, extensions }, findings }
}

function readUris(value: string, add: (code: TlsRptCode, severity: Severity, message: string) => void) {
  const uris: TlsRptUri[] = []
  // RFC 8460 §3: tlsrpt-rua = %s"rua=" tlsrpt-uri *(*WSP "," *WSP tlsrpt-uri)
  for (const part of value.split(',')) {
    const uri = part.trim()
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(uri)?.[1]?.toLowerCase()
    if (scheme === undefined || !URI_CHARS.test(uri)) {
      add('invalid_uri', 'medium', `rua: "${uri}" is not a URI.`)
    } else if (scheme === 'mailto') {
      // The domain's first label takes no period (the same strings): `[^@\s]+\.` tried every
      // period of a long run as the one, quadratic in a 64 KB TXT record.
      if (/^mailto:[^@\s]+@[^@\s][^@\s.]*\.[^@\s]+$/i.test(uri)) uris.push({ uri, scheme })
      else add('invalid_uri', 'medium', `rua: "${uri}" does not contain a valid email address.`)
    } else if (scheme === 'https') {
      if (URL.canParse(uri)) uris.push({ uri, scheme })
      else add('invalid_uri', 'medium', `rua: "${uri}" is not a valid https URL.`)
    } else {
      // RFC 8460 §3: reports go by mailto: (§5.2) or https: (§5.3); other schemes are not defined.
      add(
        'unsupported_uri_scheme',
        'medium',
        `rua: "${uri}" uses ${scheme}:, which reporters do not support.`,
      )
    }
  }
  return uris
}

export function lookupTlsRpt(deps: { dns: DnsResolver }, domain: string): Promise<TlsRptLookup> {
  // RFC 8460 §3: records not starting with v=TLSRPTv1 are discarded.
  return lookupVersionedRecord(deps.dns, `_smtp._tls.${domain}`, {
    label: 'TLS-RPT',
    isRecord: (text) => text.startsWith('v=TLSRPTv1'),
    isNearMiss: (text) => /^\s*v\s*=\s*tlsrptv1/i.test(text),
    parse: parseTlsRptRecord,
    noRecordSeverity: 'low',
    multipleConsequence: 'reporters treat that as none',
  })
}
