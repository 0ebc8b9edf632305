import { describe, expect, test } from 'bun:test'
import { parseAddress } from '../../domain/ingest/routing.ts'
import { parseMtaStsRecord } from '../../domain/mail/mta-sts.ts'
import { parseTlsRptRecord } from '../../domain/mail/tls-rpt.ts'
import { type FailureReportParts, parseFailureReport } from '../../domain/reports/forensic.ts'
import { redactAddresses } from '../../domain/reports/forensic-redaction.ts'

// Text from strangers (report mail, any domain's DNS records) read in time linear in its length.
// Each input below is the worst case of a pattern the code used before: tried from every position
// of a long run, it took 4-30 s on the service's one thread (a hostile-input sweep, 2026-11-27).
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
