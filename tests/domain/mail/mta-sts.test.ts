import { describe, expect, test } from 'bun:test'
import {
  assessMtaStsPolicy,
  lookupMtaStsRecord,
  type MtaStsPolicyParse,
  mtaStsPolicyUrl,
  mxMatchesPattern,
  parseMtaStsPolicy,
  parseMtaStsRecord,
} from '../../../domain/mail/mta-sts.ts'
import { zone } from '../dmarc/zone.ts'

const codes = (result: { findings: { code: string }[] }) => result.findings.map((finding) => finding.code)

function policy(text: string) {
  const result: MtaStsPolicyParse = parseMtaStsPolicy(text)
  if (!result.ok) throw new Error(`expected a valid policy: ${JSON.stringify(result.findings)}`)
  return result
}

describe('parseMtaStsRecord (RFC 8461 §3.1)', () => {
  test('a valid record', () => {
    expect(parseMtaStsRecord('v=STSv1; id=20240101T000000;')).toEqual({
      ok: true,
      record: { raw: 'v=STSv1; id=20240101T000000;', id: '20240101T000000', extensions: {} },
      findings: [],
    })
  })

  test('extensions are kept, the first id wins', () => {
    const result = parseMtaStsRecord('v=STSv1;id=abc;ext.1=x;id=def')
    expect(result.ok && result.record).toMatchObject({ id: 'abc', extensions: { 'ext.1': 'x' } })
  })

  test.each([
    ['v=STSv2; id=1', 'not_mta_sts'],
    ['v=stsv1; id=1', 'not_mta_sts'],
    ['v=STSv1 id=1', 'not_mta_sts'],
    ['v=STSv1;', 'missing_id'],
    ['v=STSv1; id=not-alnum', 'invalid_id'],
    [`v=STSv1; id=${'a'.repeat(33)}`, 'invalid_id'],
    ['v=STSv1; id=1; bad field', 'invalid_field'],
    ['v=STSv1; id=1; x=a=b', 'invalid_field'],
  ])('%p -> %s', (txt, code) => {
    const result = parseMtaStsRecord(txt)
    expect(result.ok).toBe(false)
    expect(codes(result)).toEqual([code])
  })
})

describe('lookupMtaStsRecord', () => {
  test('one record is found among unrelated TXT records', async () => {
    const dns = zone({ '_mta-sts.example.com': ['v=STSv1; id=1', 'google-site-verification=abc'] })
    const result = await lookupMtaStsRecord({ dns }, 'example.com')
    expect(result).toMatchObject({ status: 'found', name: '_mta-sts.example.com', record: { id: '1' } })
  })

  test('two records mean no policy', async () => {
    const dns = zone({ '_mta-sts.example.com': ['v=STSv1; id=1', 'v=STSv1; id=2'] })
    expect(await lookupMtaStsRecord({ dns }, 'example.com')).toMatchObject({
      status: 'invalid',
      findings: [{ code: 'multiple_records' }],
    })
  })

  test('no record, a near miss, and a DNS failure', async () => {
    const dns = zone({
      '_mta-sts.near.example': 'v=stsv1; id=1',
      '_mta-sts.down.example': { status: 'timeout' },
    })
    expect(await lookupMtaStsRecord({ dns }, 'example.com')).toMatchObject({ status: 'none' })
    const near = await lookupMtaStsRecord({ dns }, 'near.example')
    expect(codes(near)).toEqual(['not_mta_sts', 'no_record'])
    expect(await lookupMtaStsRecord({ dns }, 'down.example')).toMatchObject({ status: 'temperror' })
  })
})

describe('parseMtaStsPolicy (RFC 8461 §3.2)', () => {
  test('a valid enforce policy with CRLF line endings', () => {
    const result = policy(
      'version: STSv1\r\nmode: enforce\r\nmx: mail.example.com\r\nmx: *.example.net\r\nmax_age: 604800\r\n',
    )
    expect(result.policy).toEqual({
      version: 'STSv1',
      mode: 'enforce',
      mx: ['mail.example.com', '*.example.net'],
      maxAge: 604800,
      extensions: {},
    })
    expect(result.findings).toEqual([])
  })

  test('LF endings, no final newline, extensions, and a byte-order mark', () => {
    const result = policy(
      '\uFEFFversion: STSv1\nmode: testing\nmx: mx.example.com\nmax_age:86400\nfoo: a=b;c',
    )
    expect(result.policy).toMatchObject({ mode: 'testing', maxAge: 86400, extensions: { foo: 'a=b;c' } })
    expect(codes(result)).toEqual(['mode_testing'])
  })

  test('mode none needs no mx', () => {
    const result = policy('version: STSv1\nmode: none\nmax_age: 86400\n')
    expect(result.policy.mx).toEqual([])
    expect(codes(result)).toEqual(['mode_none'])
  })

  test('a repeated field keeps the first value', () => {
    const result = policy('version: STSv1\nmode: enforce\nmode: none\nmx: a.example\nmax_age: 86400')
    expect(result.policy.mode).toBe('enforce')
    expect(codes(result)).toEqual(['duplicate_field'])
  })

  test('max_age above one year is capped, a short one is flagged', () => {
    const capped = policy('version: STSv1\nmode: enforce\nmx: a.example\nmax_age: 99999999')
    expect(capped.policy.maxAge).toBe(31557600)
    expect(codes(capped)).toEqual(['max_age_above_limit'])
    expect(codes(policy('version: STSv1\nmode: enforce\nmx: a.example\nmax_age: 300'))).toEqual([
      'max_age_short',
    ])
  })

  test.each([
    ['mode: enforce\nmx: a.example\nmax_age: 86400', 'missing_version'],
    ['version: STSv2\nmode: enforce\nmx: a.example\nmax_age: 86400', 'invalid_version'],
    ['version: STSv1\nmx: a.example\nmax_age: 86400', 'missing_mode'],
    ['version: STSv1\nmode: Enforce\nmx: a.example\nmax_age: 86400', 'invalid_mode'],
    ['version: STSv1\nmode: enforce\nmx: a.example', 'missing_max_age'],
    ['version: STSv1\nmode: enforce\nmx: a.example\nmax_age: one week', 'invalid_max_age'],
    ['version: STSv1\nmode: enforce\nmax_age: 86400', 'missing_mx'],
    ['version: STSv1\nmode: enforce\nmx: mail.*.example\nmax_age: 86400', 'invalid_mx'],
  ])('%p -> %s', (text, code) => {
    const result = parseMtaStsPolicy(text)
    expect(result.ok).toBe(false)
    expect(codes(result)).toContain(code)
  })

  test('malformed lines are reported but do not invalidate the policy', () => {
    const result = policy('version: STSv1\nthis is not a field\nmode: enforce\nmx: a.example\nmax_age: 86400')
    expect(result.findings).toMatchObject([
      { code: 'malformed_line', message: expect.stringContaining('Line 2') },
    ])
  })
})

describe('MX matching and assessment', () => {
  test('RFC 8461 §4.1: a wildcard matches exactly one left-most label', () => {
    expect(mxMatchesPattern('mx1.example.com', '*.example.com')).toBe(true)
    expect(mxMatchesPattern('MX1.Example.com.', '*.example.com')).toBe(true)
    expect(mxMatchesPattern('a.b.example.com', '*.example.com')).toBe(false)
    expect(mxMatchesPattern('example.com', '*.example.com')).toBe(false)
    expect(mxMatchesPattern('mail.example.com', 'mail.example.com')).toBe(true)
    expect(mxMatchesPattern('mail2.example.com', 'mail.example.com')).toBe(false)
  })

  test('MX hosts outside the policy are flagged by mode', () => {
    const text = (mode: string) => `version: STSv1\nmode: ${mode}\nmx: *.mail.example\nmax_age: 604800`
    const hosts = ['a.mail.example', 'backup.other.example']
    const enforce = assessMtaStsPolicy({ policyText: text('enforce'), mxHosts: hosts })
    expect(enforce.findings).toMatchObject([{ code: 'mx_not_covered', severity: 'high' }])
    expect(enforce.findings[0]?.message).toContain('backup.other.example')
    const testing = assessMtaStsPolicy({ policyText: text('testing'), mxHosts: hosts })
    expect(testing.findings).toMatchObject([
      { code: 'mode_testing' },
      { code: 'mx_not_covered', severity: 'medium' },
    ])
    expect(codes(assessMtaStsPolicy({ policyText: text('enforce') }))).toEqual([])
  })

  test('the policy URL', () => {
    expect(mtaStsPolicyUrl('example.com')).toBe('https://mta-sts.example.com/.well-known/mta-sts.txt')
  })
})
