import { describe, expect, test } from 'bun:test'
import {
  DEFAULT_TLS_RPT_LIMITS,
  parseTlsRptReport,
  type TlsRptReport,
} from '../../../domain/reports/tls-rpt.ts'

// RFC 8460 Appendix B, with the additional-information URI on one line (the RFC wraps it).
const RFC_8460_EXAMPLE = `{
  "organization-name": "Company-X",
  "date-range": {
    "start-datetime": "2016-04-01T00:00:00Z",
    "end-datetime": "2016-04-01T23:59:59Z"
  },
  "contact-info": "sts-reporting@company-x.example",
  "report-id": "5065427c-23d3-47ca-b6e0-946ea0e8c4be",
  "policies": [{
    "policy": {
      "policy-type": "sts",
      "policy-string": ["version: STSv1","mode: testing",
            "mx: *.mail.company-y.example","max_age: 86400"],
      "policy-domain": "company-y.example",
      "mx-host": ["*.mail.company-y.example"]
    },
    "summary": {
      "total-successful-session-count": 5326,
      "total-failure-session-count": 303
    },
    "failure-details": [{
      "result-type": "certificate-expired",
      "sending-mta-ip": "2001:db8:abcd:0012::1",
      "receiving-mx-hostname": "mx1.mail.company-y.example",
      "failed-session-count": 100
    }, {
      "result-type": "starttls-not-supported",
      "sending-mta-ip": "2001:db8:abcd:0013::1",
      "receiving-mx-hostname": "mx2.mail.company-y.example",
      "receiving-ip": "203.0.113.56",
      "failed-session-count": 200,
      "additional-information": "https://reports.company-x.example/report_info?id=5065427c-23d3#StarttlsNotSupported"
    }, {
      "result-type": "validation-failure",
      "sending-mta-ip": "198.51.100.62",
      "receiving-ip": "203.0.113.58",
      "receiving-mx-hostname": "mx-backup.mail.company-y.example",
      "failed-session-count": 3,
      "failure-reason-code": "X509_V_ERR_PROXY_PATH_LENGTH_EXCEEDED"
    }]
  }]
}`

const example = () => JSON.parse(RFC_8460_EXAMPLE)

function parsed(json: unknown): TlsRptReport {
  const result = parseTlsRptReport(typeof json === 'string' ? json : JSON.stringify(json))
  if (!result.ok) throw new Error(JSON.stringify(result.error))
  return result.report
}

function error(json: unknown, limits = DEFAULT_TLS_RPT_LIMITS) {
  const result = parseTlsRptReport(typeof json === 'string' ? json : JSON.stringify(json), limits)
  if (result.ok) throw new Error('expected an error')
  return result.error
}

describe('RFC 8460 Appendix B example', () => {
  test('parses to the typed report', () => {
    expect(parsed(RFC_8460_EXAMPLE)).toEqual({
      organizationName: 'Company-X',
      startDatetime: '2016-04-01T00:00:00Z',
      endDatetime: '2016-04-01T23:59:59Z',
      begin: 1459468800,
      end: 1459555199,
      contactInfo: 'sts-reporting@company-x.example',
      reportId: '5065427c-23d3-47ca-b6e0-946ea0e8c4be',
      policies: [
        {
          policyType: 'sts',
          policyStrings: [
            'version: STSv1',
            'mode: testing',
            'mx: *.mail.company-y.example',
            'max_age: 86400',
          ],
          policyDomain: 'company-y.example',
          mxHosts: ['*.mail.company-y.example'],
          totalSuccessfulSessionCount: 5326,
          totalFailureSessionCount: 303,
          failureDetails: [
            {
              resultType: 'certificate-expired',
              // Held in one spelling (RFC 5952), as failure reports hold theirs.
              sendingMtaIp: '2001:db8:abcd:12::1',
              receivingMxHostname: 'mx1.mail.company-y.example',
              receivingMxHelo: null,
              receivingIp: null,
              failedSessionCount: 100,
              additionalInformation: null,
              failureReasonCode: null,
            },
            {
              resultType: 'starttls-not-supported',
              sendingMtaIp: '2001:db8:abcd:13::1',
              receivingMxHostname: 'mx2.mail.company-y.example',
              receivingMxHelo: null,
              receivingIp: '203.0.113.56',
              failedSessionCount: 200,
              additionalInformation:
                'https://reports.company-x.example/report_info?id=5065427c-23d3#StarttlsNotSupported',
              failureReasonCode: null,
            },
            {
              resultType: 'validation-failure',
              sendingMtaIp: '198.51.100.62',
              receivingMxHostname: 'mx-backup.mail.company-y.example',
              receivingMxHelo: null,
              receivingIp: '203.0.113.58',
              failedSessionCount: 3,
              additionalInformation: null,
              failureReasonCode: 'X509_V_ERR_PROXY_PATH_LENGTH_EXCEEDED',
            },
          ],
        },
      ],
    })
  })
})

describe('variants real reporters send', () => {
  test('no failure details, no mx-host, no contact-info (Google-style success-only report)', () => {
    const json = example()
    delete json.policies[0]['failure-details']
    delete json.policies[0].policy['mx-host']
    delete json['contact-info']
    const report = parsed(json)
    expect(report.contactInfo).toBeNull()
    expect(report.policies[0]).toMatchObject({ mxHosts: [], failureDetails: [] })
  })

  test('mx-host as a single string, upper-case policy domain with a trailing dot, a BOM', () => {
    const json = example()
    json.policies[0].policy['mx-host'] = 'mx.company-y.example'
    json.policies[0].policy['policy-domain'] = 'Company-Y.Example.'
    const report = parsed(`\uFEFF${JSON.stringify(json)}`)
    expect(report.policies[0]).toMatchObject({
      mxHosts: ['mx.company-y.example'],
      policyDomain: 'company-y.example',
    })
  })

  test('no-policy-found and tlsa policies, several policies', () => {
    const json = example()
    json.policies.push(
      {
        policy: { 'policy-type': 'no-policy-found', 'policy-domain': 'company-z.example' },
        summary: { 'total-successful-session-count': 10, 'total-failure-session-count': 0 },
      },
      {
        policy: { 'policy-type': 'TLSA', 'policy-string': ['3 1 1 abcd'], 'policy-domain': 'dane.example' },
        summary: { 'total-successful-session-count': 0, 'total-failure-session-count': 1 },
        'failure-details': [
          {
            'result-type': 'dnssec-invalid',
            'failed-session-count': 1,
            'receiving-mx-helo': 'mx.dane.example',
          },
        ],
      },
    )
    const report = parsed(json)
    expect(report.policies.map((policy) => policy.policyType)).toEqual(['sts', 'no-policy-found', 'tlsa'])
    expect(report.policies[1]!.policyStrings).toEqual([])
    expect(report.policies[2]!.failureDetails[0]).toMatchObject({
      resultType: 'dnssec-invalid',
      receivingMxHelo: 'mx.dane.example',
    })
  })

  test('unknown result types are kept', () => {
    const json = example()
    json.policies[0]['failure-details'][0]['result-type'] = 'brand-new-failure'
    expect(parsed(json).policies[0]!.failureDetails[0]!.resultType).toBe('brand-new-failure')
  })

  test('date-times with an offset and fractional seconds', () => {
    const json = example()
    json['date-range'] = {
      'start-datetime': '2016-04-01T02:00:00.000+02:00',
      'end-datetime': '2016-04-01t23:59:59z',
    }
    expect(parsed(json)).toMatchObject({ begin: 1459468800, end: 1459555199 })
  })

  test('date-times without a time offset (Microsoft) are UTC; other malformed ones are still refused', () => {
    const json = example()
    json['date-range'] = { 'start-datetime': '2016-04-01T00:00:00', 'end-datetime': '2016-04-01 23:59:59.5' }
    expect(parsed(json)).toMatchObject({
      startDatetime: '2016-04-01T00:00:00',
      begin: 1459468800,
      end: 1459555199,
    })
    for (const bad of [
      '2016-04-01T00:00',
      '2016-04-01T00:00:00+0200',
      '2016-04-01T00:00:00 UTC',
      '1459468800',
    ]) {
      json['date-range']['start-datetime'] = bad
      expect(error(json)).toMatchObject({ code: 'invalid_value', path: 'date-range.start-datetime' })
    }
  })
})

describe('invalid reports', () => {
  test('not JSON, empty, or not an object', () => {
    expect(error('{"organization-name": ')).toMatchObject({ code: 'invalid_json' })
    expect(error('  ')).toMatchObject({ code: 'empty' })
    expect(error('[1, 2]')).toEqual({ code: 'invalid_value', path: '$', message: '$: expected an object' })
  })

  test.each([
    ['organization-name', (json: any) => delete json['organization-name']],
    ['report-id', (json: any) => delete json['report-id']],
    ['date-range', (json: any) => delete json['date-range']],
    ['date-range.end-datetime', (json: any) => delete json['date-range']['end-datetime']],
    ['policies', (json: any) => delete json.policies],
    ['policies[0].summary', (json: any) => delete json.policies[0].summary],
    ['policies[0].policy.policy-domain', (json: any) => delete json.policies[0].policy['policy-domain']],
    [
      'policies[0].summary.total-failure-session-count',
      (json: any) => delete json.policies[0].summary['total-failure-session-count'],
    ],
    [
      'policies[0].failure-details[1].result-type',
      (json: any) => delete json.policies[0]['failure-details'][1]['result-type'],
    ],
    [
      'policies[0].failure-details[2].failed-session-count',
      (json: any) => delete json.policies[0]['failure-details'][2]['failed-session-count'],
    ],
  ])('missing %s', (path, mutate) => {
    const json = example()
    mutate(json)
    expect(error(json)).toEqual({
      code: 'missing_field',
      path,
      message: `${path} is missing (RFC 8460 §4)`,
    })
  })

  test.each([
    ['policies[0].policy.policy-type', (json: any) => (json.policies[0].policy['policy-type'] = 'dane')],
    [
      'policies[0].summary.total-successful-session-count',
      (json: any) => (json.policies[0].summary['total-successful-session-count'] = -1),
    ],
    [
      'policies[0].summary.total-failure-session-count',
      (json: any) => (json.policies[0].summary['total-failure-session-count'] = '303'),
    ],
    [
      'policies[0].failure-details[0].failed-session-count',
      (json: any) => (json.policies[0]['failure-details'][0]['failed-session-count'] = 1.5),
    ],
    ['date-range.start-datetime', (json: any) => (json['date-range']['start-datetime'] = '2016-04-01')],
    ['date-range.end-datetime', (json: any) => (json['date-range']['end-datetime'] = '2016-03-01T00:00:00Z')],
    ['policies', (json: any) => (json.policies = {})],
    ['organization-name', (json: any) => (json['organization-name'] = '  ')],
    ['policies[0].policy.mx-host[0]', (json: any) => (json.policies[0].policy['mx-host'] = [42])],
  ])('invalid %s', (path, mutate) => {
    const json = example()
    mutate(json)
    expect(error(json)).toMatchObject({ code: 'invalid_value', path, message: expect.stringContaining(path) })
  })

  test('size and shape limits', () => {
    const limits = {
      ...DEFAULT_TLS_RPT_LIMITS,
      maxPolicies: 1,
      maxFailureDetails: 2,
      maxLength: 5000,
      maxStringLength: 40,
    }
    const twoPolicies = example()
    twoPolicies.policies.push(twoPolicies.policies[0])
    expect(error(twoPolicies, limits)).toEqual({ code: 'limit_exceeded', message: 'more than 1 policies' })
    expect(error(example(), limits)).toEqual({
      code: 'limit_exceeded',
      message: 'policies[0] has more than 2 failure details',
    })
    expect(error(`${RFC_8460_EXAMPLE}${' '.repeat(5000)}`, limits)).toMatchObject({ code: 'limit_exceeded' })
    const longString = example()
    longString.policies[0]['failure-details'] = []
    longString['organization-name'] = 'x'.repeat(41)
    expect(error(longString, limits)).toEqual({
      code: 'limit_exceeded',
      message: 'organization-name is longer than 40 characters',
    })
  })
})

describe('date-range values (RFC 8460 §4.4: RFC 3339 §5.6 date-times)', () => {
  const withRange = (start: string, end: string) => {
    const json = example()
    json['date-range'] = { 'start-datetime': start, 'end-datetime': end }
    return json
  }
  const seconds = (iso: string) => Date.parse(iso) / 1000

  test('every year 0001-9999 is itself: not 1901, 1950 or 10000', () => {
    for (const [text, iso] of [
      ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00Z'],
      ['0050-06-01T00:00:00Z', '0050-06-01T00:00:00Z'],
      ['0099-12-31T23:59:59Z', '0099-12-31T23:59:59Z'],
      ['2024-02-29T12:00:00Z', '2024-02-29T12:00:00Z'],
      ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00Z'],
      ['9999-12-31T23:59:59Z', '9999-12-31T23:59:59Z'],
      ['9999-12-31T23:59:59.999999Z', '9999-12-31T23:59:59Z'],
      // The offset is applied, down to the first and up to the last second.
      ['0000-12-31T23:00:00-01:00', '0001-01-01T00:00:00Z'],
      ['0001-01-01T23:59:00+23:59', '0001-01-01T00:00:00Z'],
      ['9999-12-31T00:00:59-23:59', '9999-12-31T23:59:59Z'],
      ['2026-11-25T00:00:00-00:00', '2026-11-25T00:00:00Z'],
      // Microsoft's date-time without an offset is UTC, in any year.
      ['0001-01-01T00:00:00', '0001-01-01T00:00:00Z'],
    ]) {
      const report = parsed(withRange(text!, text!))
      expect(report.begin, text).toBe(seconds(iso!))
      expect(report.end, text).toBe(seconds(iso!))
    }
    expect(seconds('0001-01-01T00:00:00Z')).toBe(-62_135_596_800)
    expect(seconds('9999-12-31T23:59:59Z')).toBe(253_402_300_799)
  })

  test('a leap second (RFC 3339 §5.7) is the second before it, as Unix time has none', () => {
    const report = parsed(withRange('2016-12-31T23:59:60Z', '2017-01-01T00:59:60+01:00'))
    expect(report).toMatchObject({
      begin: seconds('2016-12-31T23:59:59Z'),
      end: seconds('2016-12-31T23:59:59Z'),
    })
  })

  test.each([
    ['2026-02-31T00:00:00Z', 'is not a real date-time (RFC 3339 §5.7)'],
    ['2026-02-29T00:00:00Z', 'is not a real date-time (RFC 3339 §5.7)'],
    ['1900-02-29T00:00:00Z', 'is not a real date-time (RFC 3339 §5.7)'],
    ['2026-04-31T00:00:00Z', 'is not a real date-time (RFC 3339 §5.7)'],
    ['2026-13-01T00:00:00Z', 'is not a real date-time (RFC 3339 §5.7)'],
    ['2026-00-01T00:00:00Z', 'is not a real date-time (RFC 3339 §5.7)'],
    ['2026-01-00T00:00:00Z', 'is not a real date-time (RFC 3339 §5.7)'],
    ['2026-01-01T24:00:00Z', 'is not a real date-time (RFC 3339 §5.7)'],
    ['2026-01-01T23:60:00Z', 'is not a real date-time (RFC 3339 §5.7)'],
    ['2026-01-01T23:59:61Z', 'is not a real date-time (RFC 3339 §5.7)'],
    ['2026-11-25T00:00:00+99:99', 'is not a real date-time (RFC 3339 §5.7)'],
    ['2026-11-25T00:00:00+24:00', 'is not a real date-time (RFC 3339 §5.7)'],
    ['2026-11-25T00:00:00-00:60', 'is not a real date-time (RFC 3339 §5.7)'],
    ['9999-12-31T23:59:59-23:59', 'is outside 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z'],
    ['9999-12-31T23:59:59-00:01', 'is outside 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z'],
    ['0001-01-01T00:00:00+00:01', 'is outside 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z'],
    ['0000-12-31T23:59:59Z', 'is outside 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z'],
    ['10000-01-01T00:00:00Z', 'is not an RFC 3339 date-time'],
    ['+010000-01-01T00:00:00Z', 'is not an RFC 3339 date-time'],
  ])('%s is refused, at start and at end', (text, reason) => {
    for (const [range, path] of [
      [withRange(text, '2016-04-01T23:59:59Z'), 'date-range.start-datetime'],
      [withRange('0001-01-01T00:00:00Z', text), 'date-range.end-datetime'],
    ] as const) {
      expect(error(range)).toEqual({ code: 'invalid_value', path, message: `${path}: "${text}" ${reason}` })
    }
  })

  test('an end before its begin is refused, compared as instants and in whole seconds', () => {
    const refused = (start: string, end: string) =>
      expect(error(withRange(start, end)), `${start} .. ${end}`).toEqual({
        code: 'invalid_value',
        path: 'date-range.end-datetime',
        message: 'date-range.end-datetime: the end of the date range is before its start',
      })
    refused('2016-04-01T00:00:00Z', '2016-04-01T01:00:00+02:00')
    refused('1950-06-01T00:00:00Z', '0050-06-02T00:00:00Z')
    refused('9999-12-31T23:59:59Z', '0001-01-01T00:00:00Z')
    // An empty range is kept, and so is one that ends in the second it begins: the aggregate parser
    // likewise compares whole seconds (report-fields.ts, checkMetadata).
    expect(parsed(withRange('2016-04-01T00:00:00Z', '2016-04-01T02:00:00+02:00'))).toMatchObject({
      begin: 1459468800,
      end: 1459468800,
    })
    expect(parsed(withRange('2016-04-01T00:00:00.7Z', '2016-04-01T00:00:00.2Z')).end).toBe(1459468800)
  })
})

describe('session counts (0 to 2^31 - 1, like aggregate counts)', () => {
  const paths = {
    'policies[0].summary.total-successful-session-count': (json: any, n: unknown) =>
      (json.policies[0].summary['total-successful-session-count'] = n),
    'policies[0].summary.total-failure-session-count': (json: any, n: unknown) =>
      (json.policies[0].summary['total-failure-session-count'] = n),
    'policies[0].failure-details[1].failed-session-count': (json: any, n: unknown) =>
      (json.policies[0]['failure-details'][1]['failed-session-count'] = n),
  }

  test('2147483647 and 0 are kept in each count', () => {
    for (const n of [2_147_483_647, 0]) {
      const json = example()
      for (const set of Object.values(paths)) set(json, n)
      const policy = parsed(json).policies[0]!
      expect(policy).toMatchObject({ totalSuccessfulSessionCount: n, totalFailureSessionCount: n })
      expect(policy.failureDetails[1]!.failedSessionCount).toBe(n)
    }
  })

  test('a JSON number written with an exponent or a zero fraction is the integer it equals', () => {
    const text = RFC_8460_EXAMPLE.replace(
      '"total-successful-session-count": 5326',
      '"total-successful-session-count": 5.326e3',
    ).replace('"total-failure-session-count": 303', '"total-failure-session-count": 303.0')
    expect(parsed(text).policies[0]).toMatchObject({
      totalSuccessfulSessionCount: 5326,
      totalFailureSessionCount: 303,
    })
  })

  test.each(Object.entries(paths))(
    '%s beyond 0..2147483647 or not an integer is invalid_value',
    (path, set) => {
      for (const n of [2_147_483_648, 2 ** 53 - 1, 1e300, -1, 0.5, '5', true]) {
        const json = example()
        set(json, n)
        expect(error(json), `${n}`).toEqual({
          code: 'invalid_value',
          path,
          message: `${path}: expected an integer from 0 to 2147483647`,
        })
      }
    },
  )
})
