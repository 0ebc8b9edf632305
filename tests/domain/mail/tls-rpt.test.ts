import { describe, expect, test } from 'bun:test'
import { lookupTlsRpt, parseTlsRptRecord } from '../../../domain/mail/tls-rpt.ts'
import { zone } from '../dmarc/zone.ts'

const codes = (result: { findings: { code: string }[] }) => result.findings.map((finding) => finding.code)

describe('parseTlsRptRecord (RFC 8460 §3)', () => {
  test('mailto and https destinations', () => {
    const result = parseTlsRptRecord(
      'v=TLSRPTv1; rua=mailto:tls@example.com, https://reports.example.com/tlsrpt',
    )
    expect(result).toEqual({
      ok: true,
      record: {
        raw: 'v=TLSRPTv1; rua=mailto:tls@example.com, https://reports.example.com/tlsrpt',
        rua: [
          { uri: 'mailto:tls@example.com', scheme: 'mailto' },
          { uri: 'https://reports.example.com/tlsrpt', scheme: 'https' },
        ],
        extensions: {},
      },
      findings: [],
    })
  })

  test('extensions and a trailing semicolon', () => {
    const result = parseTlsRptRecord('v=TLSRPTv1;rua=mailto:a@example.com;ext=1;')
    expect(result.ok && result.record.extensions).toEqual({ ext: '1' })
  })

  test('unsupported and invalid URIs are dropped next to valid ones', () => {
    const result = parseTlsRptRecord('v=TLSRPTv1; rua=ftp://x.example/r,mailto:bad,mailto:ok@example.com')
    expect(result.ok && result.record.rua.map((uri) => uri.uri)).toEqual(['mailto:ok@example.com'])
    expect(codes(result)).toEqual(['unsupported_uri_scheme', 'invalid_uri'])
  })

  test.each([
    ['v=TLSRPTv2; rua=mailto:a@example.com', 'not_tlsrpt'],
    ['v=tlsrptv1; rua=mailto:a@example.com', 'not_tlsrpt'],
    ['v=TLSRPTv1;', 'missing_rua'],
    ['v=TLSRPTv1; ext=1', 'missing_rua'],
    ['v=TLSRPTv1; rua=tls@example.com', 'invalid_uri'],
    ['v=TLSRPTv1; rua=mailto:a@example.com; bad field', 'invalid_field'],
  ])('%p -> %s', (txt, code) => {
    const result = parseTlsRptRecord(txt)
    expect(result.ok).toBe(false)
    expect(codes(result)).toContain(code)
  })

  test('a second rua is flagged and ignored', () => {
    const result = parseTlsRptRecord('v=TLSRPTv1; rua=mailto:a@example.com; rua=mailto:b@example.com')
    expect(result.ok && result.record.rua.map((uri) => uri.uri)).toEqual(['mailto:a@example.com'])
    expect(codes(result)).toEqual(['duplicate_rua'])
  })
})

describe('lookupTlsRpt', () => {
  test('found, none, multiple, temperror', async () => {
    const dns = zone({
      '_smtp._tls.example.com': [['v=TLSRPTv1; rua=mailto:', 'tls@example.com']],
      '_smtp._tls.two.example': [
        'v=TLSRPTv1; rua=mailto:a@two.example',
        'v=TLSRPTv1; rua=mailto:b@two.example',
      ],
      '_smtp._tls.down.example': { status: 'error', reason: 'SERVFAIL' },
    })
    expect(await lookupTlsRpt({ dns }, 'example.com')).toMatchObject({
      status: 'found',
      name: '_smtp._tls.example.com',
      record: { rua: [{ uri: 'mailto:tls@example.com' }] },
    })
    expect(await lookupTlsRpt({ dns }, 'none.example')).toMatchObject({
      status: 'none',
      findings: [{ code: 'no_record' }],
    })
    expect(await lookupTlsRpt({ dns }, 'two.example')).toMatchObject({
      status: 'invalid',
      findings: [{ code: 'multiple_records' }],
    })
    expect(await lookupTlsRpt({ dns }, 'down.example')).toMatchObject({ status: 'temperror' })
  })
})
