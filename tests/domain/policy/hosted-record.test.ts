import { describe, expect, test } from 'bun:test'
import {
  cnameToPublish,
  defaultHostedRecord,
  hostedDmarcName,
  MAX_HOSTED_RECORD,
  policyLevelOf,
  reportsTo,
  validateHostedRecord,
  withPolicy,
  withReportUri,
} from '../../../domain/dmarc/hosting.ts'

// The hosted DMARC record the progression engine edits (domain/dmarc/hosting.ts): what may be
// served, the default record, and policy edits that keep every other tag as written.

const ADDRESS = 'k3y@dmarcwatch.test'

describe('validateHostedRecord', () => {
  test('a usable record with a valid p is accepted, trimmed, with its policy and remarks', () => {
    const checked = validateHostedRecord('  v=DMARC1; p=quarantine; pct=50; rua=mailto:a@example.com  ')
    expect(checked.ok).toBe(true)
    if (!checked.ok) return
    expect(checked.value.record).toBe('v=DMARC1; p=quarantine; pct=50; rua=mailto:a@example.com')
    expect(checked.value.level).toEqual({ policy: 'quarantine', pct: 50 })
    expect(checked.value.findings.map((f) => f.code)).toContain('pct_historic')
  })

  test.each([
    ['p=none', 'not usable'],
    ['v=DMARC1; rua=mailto:a@example.com', 'needs a p tag'],
    ['v=DMARC1; p=block; rua=mailto:a@example.com', 'needs a p tag'],
    ['v=DMARC1; p=none; sp=maybe; rua=mailto:a@example.com', 'The sp tag must be'],
    ['v=DMARC1; p=none; np=x; rua=mailto:a@example.com', 'The np tag must be'],
    ['v=DMARC1; p=none; rua=mailto:é@example.com', 'printable ASCII'],
    [`v=DMARC1; p=none; rua=mailto:${'a'.repeat(MAX_HOSTED_RECORD)}@example.com`, 'at most 1000'],
  ])('%s is refused on the record field', (text, message) => {
    const checked = validateHostedRecord(text)
    expect(checked.ok).toBe(false)
    if (checked.ok || checked.failure.code !== 'validation_failed') return
    expect(checked.failure.errors.record?.[0]).toContain(message)
  })

  test('policyLevelOf reads p and pct; null for anything unusable', () => {
    expect(policyLevelOf('v=DMARC1; p=reject')).toEqual({ policy: 'reject', pct: null })
    expect(policyLevelOf('v=DMARC1')).toBeNull()
  })
})

describe('withPolicy keeps every other tag as written', () => {
  test('p changes in place: order, spacing, sp, rua, t and unknown tags stay', () => {
    const record = 'v=DMARC1;p=none;  sp=none ; t=y; rua=mailto:a@example.com; foo=bar;'
    expect(withPolicy(record, 'quarantine')).toBe(
      'v=DMARC1;p=quarantine;  sp=none ; t=y; rua=mailto:a@example.com; foo=bar;',
    )
  })

  test('pct: undefined keeps it, 100 or null drops it, below 100 writes it after p', () => {
    const record = 'v=DMARC1; p=quarantine; pct=25; rua=mailto:a@example.com'
    expect(withPolicy(record, 'reject')).toBe('v=DMARC1; p=reject; pct=25; rua=mailto:a@example.com')
    expect(withPolicy(record, 'quarantine', 100)).toBe('v=DMARC1; p=quarantine; rua=mailto:a@example.com')
    expect(withPolicy(record, 'quarantine', null)).toBe('v=DMARC1; p=quarantine; rua=mailto:a@example.com')
    expect(withPolicy('v=DMARC1; p=none; rua=mailto:a@example.com', 'quarantine', 10)).toBe(
      'v=DMARC1; p=quarantine; pct=10; rua=mailto:a@example.com',
    )
    expect(() => withPolicy(record, 'reject', 101)).toThrow()
  })

  test('a record without p gets one right after v', () => {
    expect(withPolicy('v=DMARC1; rua=mailto:a@example.com', 'none')).toBe(
      'v=DMARC1; p=none; rua=mailto:a@example.com',
    )
  })

  test('the result is still a valid record with the new policy', () => {
    const edited = withPolicy('v=DMARC1; p=none; adkim=s; rua=mailto:a@example.com', 'reject')
    expect(policyLevelOf(edited)).toEqual({ policy: 'reject', pct: null })
  })
})

describe('the default record and the report address', () => {
  test('no own record: monitoring only, reports to the account', () => {
    expect(defaultHostedRecord(null, ADDRESS)).toBe(`v=DMARC1; p=none; rua=mailto:${ADDRESS}`)
    expect(defaultHostedRecord('v=DMARC1; p=bogus', ADDRESS)).toBe(`v=DMARC1; p=none; rua=mailto:${ADDRESS}`)
  })

  test("the domain's own record is kept, with the account's address added to rua", () => {
    expect(defaultHostedRecord('v=DMARC1; p=quarantine; rua=mailto:d@example.com', ADDRESS)).toBe(
      `v=DMARC1; p=quarantine; rua=mailto:d@example.com,mailto:${ADDRESS}`,
    )
    expect(defaultHostedRecord('v=DMARC1; p=reject; adkim=s', ADDRESS)).toBe(
      `v=DMARC1; p=reject; rua=mailto:${ADDRESS}; adkim=s`,
    )
  })

  test('an address already listed (any case, with a size limit) is not added twice', () => {
    const record = `v=DMARC1; p=none; rua=mailto:${ADDRESS.toUpperCase()}!10m`
    expect(withReportUri(record, `mailto:${ADDRESS}`)).toBe(record)
    expect(reportsTo(record, ADDRESS)).toBe(true)
    expect(reportsTo('v=DMARC1; p=none; rua=mailto:d@example.com', ADDRESS)).toBe(false)
  })
})

test('the hosted name and the CNAME to publish', () => {
  const name = hostedDmarcName('example-com', 'SPF.dmarcwatch.test.')
  expect(name).toBe('example-com._dmarc.spf.dmarcwatch.test')
  expect(cnameToPublish('example.com', name)).toEqual({
    name: '_dmarc.example.com',
    type: 'CNAME',
    target: name,
    record: '_dmarc.example.com. IN CNAME example-com._dmarc.spf.dmarcwatch.test.',
  })
})
