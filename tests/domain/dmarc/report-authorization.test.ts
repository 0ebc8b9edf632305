import { describe, expect, test } from 'bun:test'
import { parseDmarcRecord } from '../../../domain/dmarc/record.ts'
import { checkReportAuthorization } from '../../../domain/dmarc/report-authorization.ts'
import { zone } from './zone.ts'

function recordOf(txt: string) {
  const parsed = parseDmarcRecord(txt)
  if (!parsed.ok) throw new Error('test record does not parse')
  return parsed.record
}

const input = (txt: string) => ({
  policyDomain: 'example.com',
  organizationalDomain: 'example.com',
  record: recordOf(txt),
})

describe('checkReportAuthorization (RFC 7489 §7.1, RFC 9990 §4)', () => {
  test('destinations inside the organizational domain need no authorization', async () => {
    const dns = zone({})
    const result = await checkReportAuthorization(
      { dns },
      input('v=DMARC1; p=none; rua=mailto:d@example.com,mailto:d@reports.example.com'),
    )
    expect(result.destinations.map((destination) => destination.status)).toEqual([
      'not_required',
      'not_required',
    ])
    expect(dns.queries).toEqual([])
    expect(result.findings).toEqual([])
  })

  test('an external destination with an authorization record is authorized', async () => {
    const dns = zone({ 'example.com._report._dmarc.reports.example.net': 'v=DMARC1;' })
    const result = await checkReportAuthorization(
      { dns },
      input('v=DMARC1; p=none; rua=mailto:d@reports.example.net'),
    )
    expect(result.destinations).toEqual([
      {
        tag: 'rua',
        uri: 'mailto:d@reports.example.net',
        host: 'reports.example.net',
        status: 'authorized',
        name: 'example.com._report._dmarc.reports.example.net',
        record: 'v=DMARC1;',
        override: [],
      },
    ])
    expect(result.findings).toEqual([])
  })

  test('the wildcard form *._report._dmarc.<host> authorizes any policy domain', async () => {
    const dns = zone({ '*._report._dmarc.vendor.example': 'v=DMARC1' })
    const result = await checkReportAuthorization(
      { dns },
      input('v=DMARC1; p=none; rua=mailto:a@vendor.example; ruf=mailto:f@vendor.example'),
    )
    expect(result.destinations.map((destination) => destination.status)).toEqual(['authorized', 'authorized'])
    // Both URIs share one host, so one query answers both.
    expect(dns.queries).toEqual(['example.com._report._dmarc.vendor.example|TXT'])
  })

  test('no record means not authorized, with a finding per tag', async () => {
    const dns = zone({ 'vendor.example|A': { status: 'ok', authenticated: false, records: [] } })
    const result = await checkReportAuthorization(
      { dns },
      input('v=DMARC1; p=none; rua=mailto:a@vendor.example; ruf=mailto:f@vendor.example'),
    )
    expect(result.destinations.map((destination) => destination.status)).toEqual([
      'not_authorized',
      'not_authorized',
    ])
    expect(result.findings).toMatchObject([
      { code: 'external_destination_not_authorized', severity: 'high' },
      { code: 'external_destination_not_authorized', severity: 'medium' },
    ])
  })

  test('a TXT record that is not v=DMARC1 does not authorize', async () => {
    const dns = zone({ 'example.com._report._dmarc.vendor.example': 'hello' })
    const result = await checkReportAuthorization(
      { dns },
      input('v=DMARC1; p=none; rua=mailto:a@vendor.example'),
    )
    expect(result.destinations[0]?.status).toBe('not_authorized')
  })

  test('a DNS failure is a temperror', async () => {
    const dns = zone({ 'example.com._report._dmarc.vendor.example': { status: 'error', reason: 'SERVFAIL' } })
    const result = await checkReportAuthorization(
      { dns },
      input('v=DMARC1; p=none; rua=mailto:a@vendor.example'),
    )
    expect(result.destinations[0]?.status).toBe('temperror')
    expect(result.findings).toMatchObject([{ code: 'external_destination_temperror', severity: 'low' }])
  })

  test('an override at the same host is accepted', async () => {
    const dns = zone({
      'example.com._report._dmarc.vendor.example': 'v=DMARC1; rua=mailto:other-box@vendor.example',
    })
    const result = await checkReportAuthorization(
      { dns },
      input('v=DMARC1; p=none; rua=mailto:a@vendor.example'),
    )
    expect(result.destinations[0]?.status).toBe('authorized')
    expect(result.destinations[0]?.override.map((uri) => uri.address)).toEqual(['other-box@vendor.example'])
  })

  test('an override to another host voids both URIs', async () => {
    const dns = zone({
      'example.com._report._dmarc.vendor.example': 'v=DMARC1; rua=mailto:x@elsewhere.example',
    })
    const result = await checkReportAuthorization(
      { dns },
      input('v=DMARC1; p=none; rua=mailto:a@vendor.example'),
    )
    expect(result.destinations[0]?.status).toBe('not_authorized')
    expect(result.findings).toMatchObject([{ code: 'report_override_host_mismatch' }])
  })

  test('the query name uses the policy domain, not the organizational domain', async () => {
    const dns = zone({ 'mail.example.com._report._dmarc.vendor.example': 'v=DMARC1' })
    const result = await checkReportAuthorization(
      { dns },
      { ...input('v=DMARC1; p=none; rua=mailto:a@vendor.example'), policyDomain: 'mail.example.com' },
    )
    expect(result.destinations[0]?.status).toBe('authorized')
  })

  test('a name beyond DNS limits cannot be authorized', async () => {
    const longHost = `${['a', 'b', 'c', 'd'].map((c) => c.repeat(60)).join('.')}.example`
    const dns = zone({})
    const result = await checkReportAuthorization(
      { dns },
      input(`v=DMARC1; p=none; rua=mailto:x@${longHost}`),
    )
    expect(result.destinations[0]?.status).toBe('not_authorized')
    expect(result.findings).toMatchObject([{ code: 'authorization_name_too_long' }])
    expect(dns.queries).toEqual([])
  })

  test('https destinations are checked by their host', async () => {
    const dns = zone({ 'example.com._report._dmarc.collector.example': 'v=DMARC1' })
    const result = await checkReportAuthorization(
      { dns },
      input('v=DMARC1; p=none; rua=https://collector.example/dmarc'),
    )
    expect(result.destinations[0]).toMatchObject({ host: 'collector.example', status: 'authorized' })
  })
})
