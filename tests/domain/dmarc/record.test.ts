import { describe, expect, test } from 'bun:test'
import { type DmarcParseResult, isDmarcRecordText, parseDmarcRecord } from '../../../domain/dmarc/record.ts'
import { parseReportUri } from '../../../domain/dmarc/report-uri.ts'

const codes = (result: DmarcParseResult) => result.findings.map((finding): string => finding.code)

function record(txt: string) {
  const result = parseDmarcRecord(txt)
  if (!result.ok) throw new Error(`expected ${txt} to parse: ${JSON.stringify(result.findings)}`)
  return result
}

describe('parseDmarcRecord: valid records', () => {
  test('a complete RFC 9989 record', () => {
    const { record: r, findings } = record(
      'v=DMARC1; p=reject; sp=quarantine; np=reject; adkim=s; aspf=r; rua=mailto:agg@example.com; ruf=mailto:fail@example.com; fo=1:d; t=n; psd=n',
    )
    expect(r.p).toBe('reject')
    expect(r.sp).toBe('quarantine')
    expect(r.np).toBe('reject')
    expect(r.effective).toEqual({ p: 'reject', sp: 'quarantine', np: 'reject' })
    expect(r.adkim).toBe('s')
    expect(r.aspf).toBe('r')
    expect(r.rua.map((uri) => uri.address)).toEqual(['agg@example.com'])
    expect(r.ruf[0]?.host).toBe('example.com')
    expect(r.fo).toEqual(['1', 'd'])
    expect(r.testing).toBe(false)
    expect(r.psd).toBe('n')
    expect(findings).toEqual([])
  })

  test('defaults: relaxed alignment, fo=0, psd=u, sp and np inherit p', () => {
    const { record: r } = record('v=DMARC1; p=quarantine; rua=mailto:d@example.com')
    expect(r.adkim).toBe('r')
    expect(r.aspf).toBe('r')
    expect(r.fo).toEqual(['0'])
    expect(r.psd).toBe('u')
    expect(r.sp).toBeNull()
    expect(r.effective).toEqual({ p: 'quarantine', sp: 'quarantine', np: 'quarantine' })
  })

  test('np falls back to sp before p (RFC 9989 §4.7)', () => {
    expect(record('v=DMARC1; p=none; sp=reject; rua=mailto:d@example.com').record.effective.np).toBe('reject')
  })

  test('tag names and values are case-insensitive, whitespace is tolerated', () => {
    const { record: r, findings } = record(
      'V = DMARC1 ;  P = Reject ; SP=NONE;ADKIM = S ;  RUA = mailto:D@Example.COM , mailto:x@example.net ;',
    )
    expect(r.p).toBe('reject')
    expect(r.sp).toBe('none')
    expect(r.adkim).toBe('s')
    expect(r.rua.map((uri) => uri.address)).toEqual(['D@example.com', 'x@example.net'])
    expect(findings).toEqual([])
  })

  test('trailing semicolon and tabs are fine', () => {
    expect(record('v=DMARC1;\tp=none;\trua=mailto:a@example.com;').findings).toEqual([])
  })

  test('size suffixes in every unit (RFC 7489 §6.4), flagged as historic', () => {
    const result = record(
      'v=DMARC1; p=none; rua=mailto:a@example.com!10m,mailto:b@example.com!512,mailto:c@example.com!2k,mailto:d@example.com!1g,mailto:e@example.com!1T',
    )
    expect(result.record.rua.map((uri) => uri.maxSizeBytes)).toEqual([
      10 * 2 ** 20,
      512,
      2048,
      2 ** 30,
      2 ** 40,
    ])
    expect(result.record.rua[0]?.uri).toBe('mailto:a@example.com')
    expect(codes(result)).toEqual(['size_limit_historic'])
  })

  test('t=y is read as testing mode', () => {
    const result = record('v=DMARC1; p=reject; t=y; rua=mailto:a@example.com')
    expect(result.record.testing).toBe(true)
    expect(codes(result)).toEqual(['testing_mode'])
  })
})

describe('parseDmarcRecord: not a record', () => {
  test.each([
    ['', 'empty_record'],
    ['   ', 'empty_record'],
    ['v=spf1 -all', 'not_dmarc'],
    ['p=reject; v=DMARC1', 'version_not_first'],
    ['v=DMARC2; p=reject', 'invalid_version'],
    ['v=dmarc1; p=reject', 'invalid_version'],
  ])('%p -> %s', (txt, code) => {
    const result = parseDmarcRecord(txt)
    expect(result.ok).toBe(false)
    expect(codes(result)).toEqual([code])
  })

  test('isDmarcRecordText follows RFC 9989 §4.10 step 2', () => {
    expect(isDmarcRecordText('v=DMARC1; p=none')).toBe(true)
    expect(isDmarcRecordText('V = DMARC1')).toBe(true)
    expect(isDmarcRecordText('v=dmarc1; p=none')).toBe(false)
    expect(isDmarcRecordText('v=DMARC1 p=none')).toBe(false)
    expect(isDmarcRecordText('v=DMARC10')).toBe(false)
  })
})

describe('parseDmarcRecord: policy errors and the RFC 9989 p=none rule', () => {
  test('missing p with a valid rua is treated as p=none', () => {
    const result = record('v=DMARC1; rua=mailto:a@example.com')
    expect(result.record.p).toBeNull()
    expect(result.record.effective).toEqual({ p: 'none', sp: 'none', np: 'none' })
    expect(result.findings).toMatchObject([{ code: 'missing_policy', severity: 'medium' }])
  })

  test('missing p without rua: no DMARC processing', () => {
    const result = parseDmarcRecord('v=DMARC1')
    expect(result.ok).toBe(false)
    expect(result.findings).toMatchObject([{ code: 'missing_policy', severity: 'high' }])
  })

  test('invalid p with a valid rua is p=none; without rua the record is unusable', () => {
    const withRua = record('v=DMARC1; p=block; sp=reject; rua=mailto:a@example.com')
    expect(withRua.record.effective).toEqual({ p: 'none', sp: 'none', np: 'none' })
    expect(codes(withRua)).toEqual(['invalid_policy'])
    const without = parseDmarcRecord('v=DMARC1; p=block')
    expect(without.ok).toBe(false)
    expect(codes(without)).toEqual(['invalid_policy'])
  })

  test('invalid sp or np also falls back to p=none (RFC 9989 §4.10.1)', () => {
    const sp = record('v=DMARC1; p=reject; sp=strict; rua=mailto:a@example.com')
    expect(sp.record.effective.p).toBe('none')
    expect(codes(sp)).toEqual(['invalid_subdomain_policy'])
    const np = parseDmarcRecord('v=DMARC1; p=reject; np=maybe')
    expect(np.ok).toBe(false)
    expect(codes(np)).toEqual(['invalid_nonexistent_policy'])
  })

  test('a record without rua is flagged', () => {
    expect(codes(record('v=DMARC1; p=reject'))).toEqual(['no_aggregate_reports'])
  })
})

describe('parseDmarcRecord: tag errors', () => {
  const base = 'v=DMARC1; p=none; rua=mailto:a@example.com'

  test.each([
    [`${base}; foo=bar`, 'unknown_tag'],
    [`${base}; p=reject`, 'duplicate_tag'],
    [`${base}; v=DMARC1`, 'duplicate_tag'],
    [`${base}; garbage`, 'invalid_tag_syntax'],
    [`${base}; 1x=2`, 'invalid_tag_syntax'],
    [`${base}; adkim=x`, 'invalid_alignment_mode'],
    [`${base}; aspf=relaxed`, 'invalid_alignment_mode'],
    [`${base}; t=maybe`, 'invalid_testing_flag'],
    [`${base}; psd=x`, 'invalid_psd'],
    [`${base}; ruf=mailto:f@example.com; fo=0:x`, 'invalid_failure_options'],
    [`${base}; fo=1`, 'fo_without_ruf'],
    [`${base}; pct=100`, 'pct_historic'],
    [`${base}; pct=150`, 'invalid_pct'],
    [`${base}; rf=afrf`, 'rf_historic'],
    [`${base}; ri=86400`, 'ri_historic'],
    [` ${base}`, 'leading_whitespace'],
  ])('%p -> %s', (txt, code) => {
    expect(codes(record(txt))).toEqual([code])
  })

  test('duplicate tags keep the first value', () => {
    expect(record(`${base}; p=reject`).record.p).toBe('none')
  })

  test('pct below 100 is a medium finding and is kept', () => {
    const result = record(`${base}; pct=25`)
    expect(result.record.pct).toBe(25)
    expect(result.findings).toMatchObject([{ code: 'pct_historic', severity: 'medium' }])
  })

  test('historic rf and ri values are still read', () => {
    const { record: r } = record(`${base}; rf=afrf:iodef; ri=3600`)
    expect(r.rf).toEqual(['afrf', 'iodef'])
    expect(r.ri).toBe(3600)
  })
})

describe('reporting URIs', () => {
  test.each([
    ['rua=dmarc@example.com', 'mailto:'],
    ['rua=mailto:', 'valid email'],
    ['rua=mailto:nobody', 'valid email'],
    ['rua=mailto:a@example.com!10x', 'percent-encoded'],
    ['rua=mailto:a@example.com,,mailto:b@example.com', 'empty entry'],
    ['rua=mailto:a b@example.com', 'not allowed'],
  ])('%p is invalid_uri', (tag, hint) => {
    const result = parseDmarcRecord(`v=DMARC1; p=none; ${tag}`)
    const finding = result.findings.find((f) => f.code === 'invalid_uri')
    expect(finding?.message).toContain(hint)
  })

  test('an invalid URI next to a valid one keeps the valid one', () => {
    const result = record('v=DMARC1; p=none; rua=nope,mailto:ok@example.com')
    expect(result.record.rua.map((uri) => uri.address)).toEqual(['ok@example.com'])
  })

  test('only invalid rua URIs leave an invalid p unusable', () => {
    expect(parseDmarcRecord('v=DMARC1; p=bad; rua=nope').ok).toBe(false)
  })

  test('https destinations are valid but flagged', () => {
    const result = record('v=DMARC1; p=none; rua=https://reports.example.net/dmarc')
    expect(result.record.rua[0]).toMatchObject({
      scheme: 'https',
      host: 'reports.example.net',
      address: null,
    })
    expect(codes(result)).toEqual(['unsupported_uri_scheme'])
  })

  test('mailto hosts become lower-case A-labels and escapes are decoded', () => {
    expect(parseReportUri('mailto:dmarc%2Breports@B%C3%9CCHER.example')).toMatchObject({
      address: 'dmarc+reports@xn--bcher-kva.example',
      host: 'xn--bcher-kva.example',
      maxSizeBytes: null,
    })
    // RFC 3986 has no room for raw non-ASCII: it must be percent-encoded.
    expect(parseReportUri('mailto:a@bücher.example')).toHaveProperty('reason')
  })
})
