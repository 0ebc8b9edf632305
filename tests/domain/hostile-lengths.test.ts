import { describe, expect, test } from 'bun:test'
import { parseAddress } from '../../domain/ingest/routing.ts'
import { parseMtaStsPolicy, parseMtaStsRecord } from '../../domain/mail/mta-sts.ts'
import { parseTlsRptRecord } from '../../domain/mail/tls-rpt.ts'
import { namespaceDeclarations } from '../../domain/reports/aggregate/report-fields.ts'
import { type FailureReportParts, parseFailureReport } from '../../domain/reports/forensic.ts'
import { redactAddresses } from '../../domain/reports/forensic-redaction.ts'
import { parseHeaderFields } from '../../domain/reports/header-fields.ts'
import { parseSpfRecord } from '../../domain/spf/record.ts'

// Text from strangers (report mail, any domain's DNS records) read in time linear in its length.
// Each input below is the worst case of a pattern the code used before: tried from every position
// of a long run, it took 4-30 s on the service's one thread (a hostile-input sweep and a review of
// every pattern, 2026-11-27); the MTA-STS policy line was cubic (10 s for 4,000 characters).
// Linear code does each in a few milliseconds; the bound leaves room for a slow, busy machine.

const N = 250_000
const BOUND_MS = 500

function timed<T>(work: () => T): { value: T; ms: number } {
  const start = performance.now()
  const value = work()
  return { value, ms: performance.now() - start }
}

const parts = (feedbackReport: string, originalHeaders: string | null = null): FailureReportParts => ({
  feedbackReport,
  originalHeaders,
  humanReadable: null,
  subject: null,
})

describe('failure reports', () => {
  test('a Source-IP of a long run of periods before junk', () => {
    const { value, ms } = timed(() =>
      parseFailureReport(parts(`Feedback-Type: auth-failure\nSource-IP: 192.0.2.1${'.'.repeat(N)}x\n`)),
    )
    expect(ms).toBeLessThan(BOUND_MS)
    expect(value.ok && value.report.sourceIp).toBeNull()
  })

  test('trailing punctuation is still dropped from a Source-IP', () => {
    const parsed = parseFailureReport(parts('Feedback-Type: auth-failure\nSource-IP: 192.0.2.1.;:,\n'))
    expect(parsed.ok && parsed.report.sourceIp).toBe('192.0.2.1')
  })

  test('redaction of a long value without an @', () => {
    const hash = () => '0123456789abcdef'
    const { value, ms } = timed(() => redactAddresses(`From: ${'a'.repeat(N)}`, hash))
    expect(ms).toBeLessThan(BOUND_MS)
    expect(value).toBe(`From: ${'a'.repeat(N)}`)
    // Addresses are still found inside runs of other text, and only their local part changes.
    expect(redactAddresses('x "Ann" <ann@example.com>, smtp.mailfrom=bob@example.org', hash)).toBe(
      'x "Ann" <redacted-01234567@example.com>, smtp.mailfrom=redacted-01234567@example.org',
    )
  })
})

describe('recipient addresses', () => {
  test('a long header value without an @', () => {
    const { value, ms } = timed(() => parseAddress(`${'a'.repeat(N)}x`))
    expect(ms).toBeLessThan(BOUND_MS)
    expect(value).toBeNull()
    expect(parseAddress('Reports <R1+tag@Example.COM.>')).toEqual({ local: 'r1+tag', domain: 'example.com' })
  })
})

describe('TXT records of any domain', () => {
  const blanks = `x${' '.repeat(N)}x`
  test('an MTA-STS record with a field of a long run of blanks', () => {
    const { ms } = timed(() => parseMtaStsRecord(`v=STSv1; id=abc; ${blanks}`))
    expect(ms).toBeLessThan(BOUND_MS)
    expect(parseMtaStsRecord('v=STSv1;  \t id=abc \t ;')).toMatchObject({ ok: true, record: { id: 'abc' } })
  })

  test('a TLS-RPT record with a field of a long run of blanks', () => {
    const { ms } = timed(() => parseTlsRptRecord(`v=TLSRPTv1; rua=mailto:a@example.com; ${blanks}`))
    expect(ms).toBeLessThan(BOUND_MS)
  })
})

describe('more text from strangers', () => {
  test('an MTA-STS policy line of blanks before a lone CR (fetched from any domain)', () => {
    const { value, ms } = timed(() =>
      parseMtaStsPolicy(
        `version: STSv1\nmode: enforce\nmx: mx.example.com\nmax_age: 86400\nx:${' '.repeat(60_000)}\r\n`,
      ),
    )
    expect(ms).toBeLessThan(BOUND_MS)
    expect(JSON.stringify(value)).toContain('malformed_line')
    // Blanks around a value are still allowed (RFC 8461 §3.2: *WSP).
    const tidy = parseMtaStsPolicy(
      'version: STSv1\nmode:  \tenforce \t\nmx: mx.example.com\nmax_age: 86400\n',
    )
    expect(JSON.stringify(tidy)).not.toContain('malformed_line')
  })

  test('a failure report header of blanks before a lone CR', () => {
    const { value, ms } = timed(() => parseHeaderFields(`X:${' '.repeat(N)}\rjunk\nFrom: a@example.com\n`))
    expect(ms).toBeLessThan(BOUND_MS)
    expect(value).toEqual([{ name: 'from', value: 'a@example.com' }])
    expect(parseHeaderFields('Subject \t:  hello \t\n')).toEqual([{ name: 'subject', value: 'hello' }])
  })

  test('an aggregate start tag whose attribute value repeats xmlns', () => {
    const { value, ms } = timed(() => namespaceDeclarations(`a="${'xmlns:'.repeat(N / 6)}"`))
    expect(ms).toBeLessThan(BOUND_MS)
    expect(value).toEqual([])
    expect(namespaceDeclarations(' xmlns="urn:ietf:params:xml:ns:dmarc-2.0" xmlns:x=\'u\'')).toEqual([
      ['', 'urn:ietf:params:xml:ns:dmarc-2.0'],
      ['x', 'u'],
    ])
  })

  test('an SPF domain whose last label is a long run of letters and a bad character', () => {
    const { value, ms } = timed(() => parseSpfRecord(`v=spf1 include:x.${'a'.repeat(60_000)}! -all`))
    expect(ms).toBeLessThan(BOUND_MS)
    expect(value.ok).toBe(false)
    expect(parseSpfRecord('v=spf1 include:_spf.example1.com include:a-1.b2c -all').ok).toBe(true)
  })

  test('a TLS-RPT rua of a long run of periods', () => {
    const { ms } = timed(() => parseTlsRptRecord(`v=TLSRPTv1; rua=mailto:a@${'.'.repeat(60_000)}@`))
    expect(ms).toBeLessThan(BOUND_MS)
    expect(JSON.stringify(parseTlsRptRecord('v=TLSRPTv1; rua=mailto:tls@example.com'))).not.toContain(
      'invalid_uri',
    )
  })
})
