import { describe, expect, test } from 'bun:test'
import { type FailureReportParts, parseFailureReport } from '../../../domain/reports/forensic.ts'
import {
  decodeEncodedWords,
  parseHeaderFields,
  stripComments,
} from '../../../domain/reports/header-fields.ts'
import { parseMailDate } from '../../../domain/reports/mail-date.ts'

const parts = (overrides: Partial<FailureReportParts>): FailureReportParts => ({
  feedbackReport: null,
  originalHeaders: null,
  humanReadable: null,
  subject: null,
  ...overrides,
})

function arf(fields: string) {
  const parsed = parseFailureReport(parts({ feedbackReport: fields }))
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.error))
  return parsed.report
}

describe('ARF fields (RFC 5965 §3, RFC 6591 §3, RFC 7489 §7.3.1)', () => {
  test('repeated fields, Reporting-MTA, Incidents, Identity-Alignment, unknown values kept', () => {
    const report = arf(
      [
        'Feedback-Type: Auth-Failure',
        'User-Agent: Test/1',
        'Version: 1',
        'Reporting-MTA: dns; mx.receiver.example',
        'Incidents: 7',
        'Original-Rcpt-To: <a@example.com>',
        'Original-Rcpt-To: b@example.com',
        'Reported-Domain: Example.COM.',
        'Reported-Domain: other.example',
        'Auth-Failure: Something-New',
        'Identity-Alignment: SPF, dkim',
        'Delivery-Result: Reject',
        'DKIM-Selector: s1',
        'SPF-DNS: txt : example.com : "v=spf1 -all"',
      ].join('\n'),
    )
    expect(report).toMatchObject({
      feedbackType: 'auth-failure',
      reportingMta: 'mx.receiver.example',
      incidents: 7,
      originalRcptTo: ['a@example.com', 'b@example.com'],
      reportedDomains: ['example.com', 'other.example'],
      authFailure: 'something-new',
      identityAlignment: ['spf', 'dkim'],
      deliveryResult: 'reject',
      dkimSelector: 's1',
      spfDns: 'txt : example.com : "v=spf1 -all"',
      original: null,
    })
  })

  test('Source-IP: comments, brackets, IPv6 in canonical form, IPv4-mapped, and garbage', () => {
    const ip = (value: string) => arf(`Feedback-Type: auth-failure\nSource-IP: ${value}`).sourceIp
    expect(ip('148.163.85.135 (sainay.example)')).toBe('148.163.85.135')
    expect(ip('[192.0.2.1]')).toBe('192.0.2.1')
    expect(ip('2001:DB8:0:0:0:0:0:1')).toBe('2001:db8::1')
    expect(ip('::ffff:203.0.113.9')).toBe('203.0.113.9')
    expect(ip('not-an-ip')).toBeNull()
  })

  test('Received-Date (the ARF drafts name) stands in for Arrival-Date; Incidents defaults to 1', () => {
    const report = arf(
      'Feedback-Type: auth-failure\nReceived-Date: Thu, 8 Mar 2005 14:00:00 EDT\nIncidents: zero',
    )
    expect(report.arrivalTime).toBe(1110304800)
    expect(report.incidents).toBe(1)
  })

  test('a feedback-report part without Feedback-Type is refused', () => {
    expect(parseFailureReport(parts({ feedbackReport: 'User-Agent: x\nVersion: 1\n' }))).toEqual({
      ok: false,
      error: { code: 'missing_field', message: 'the feedback report has no Feedback-Type (RFC 5965 §3.1)' },
    })
  })

  test('original headers: first empty line ends them, encoded words are decoded, bodies ignored', () => {
    const report = parseFailureReport(
      parts({
        feedbackReport: 'Feedback-Type: auth-failure',
        originalHeaders: [
          'From: =?UTF-8?B?SsO8cmdlbg==?= <j@example.com>',
          'To: one@example.net,',
          ' two@example.net',
          'Subject: =?ISO-8859-1?Q?Gr=FC=DFe?= =?ISO-8859-1?Q?_aus_K=F6ln?=',
          'Message-ID: <m1@example.com>',
          '',
          'Subject: not a header, this is the body',
        ].join('\r\n'),
      }),
    )
    expect(report.ok && report.report.original).toEqual({
      from: 'Jürgen <j@example.com>',
      to: 'one@example.net, two@example.net',
      subject: 'Grüße aus Köln',
      date: null,
      messageId: '<m1@example.com>',
    })
  })
})

describe('reports without an ARF part', () => {
  test('details from the text and the subject; From domain as the reported domain', () => {
    const parsed = parseFailureReport(
      parts({
        humanReadable:
          'This is an authentication failure report for an email message received from IP\n192.0.2.7 on Mon.\n\nFrom: x@brand.example\nSubject: hi\nMessage-ID: <1@brand.example>\n',
        subject: 'Failure report',
      }),
    )
    expect(parsed).toMatchObject({
      ok: true,
      report: {
        format: 'plain-text',
        sourceIp: '192.0.2.7',
        reportedDomains: ['brand.example'],
        original: { from: 'x@brand.example', subject: 'hi', messageId: '<1@brand.example>' },
      },
    })
  })

  test('the subject alone can carry the IP and domain', () => {
    const parsed = parseFailureReport(
      parts({
        humanReadable: 'See subject.',
        subject: 'DMARC Forensic Report for shop.example from IP 2001:db8::5',
      }),
    )
    expect(parsed).toMatchObject({
      ok: true,
      report: { sourceIp: '2001:db8::5', reportedDomains: ['shop.example'], authFailure: 'dmarc' },
    })
  })

  test('text that names nothing is not a failure report', () => {
    expect(
      parseFailureReport(parts({ humanReadable: 'Your mailbox is full.', subject: 'Undeliverable' })),
    ).toEqual({
      ok: false,
      error: { code: 'not_failure_report', message: expect.stringContaining('no feedback-report part') },
    })
  })
})

describe('header field helpers', () => {
  test('parseHeaderFields unfolds continuation lines and lower-cases names', () => {
    expect(
      parseHeaderFields('A-B: one\n\ttwo\r\nC:three\nnot a field\n  stray continuation\nD: four'),
    ).toEqual([
      { name: 'a-b', value: 'one two' },
      { name: 'c', value: 'three' },
      { name: 'd', value: 'four' },
    ])
  })

  test('stripComments handles nesting and keeps quoted parentheses', () => {
    expect(stripComments('a (b (c) d) "e (f)" g')).toBe('a "e (f)" g')
  })

  test('decodeEncodedWords: split UTF-8 across words, unknown charset and bad base64 left as written', () => {
    expect(decodeEncodedWords('=?UTF-8?B?w7w=?= =?UTF-8?B?w7w=?=')).toBe('üü')
    expect(decodeEncodedWords('=?UTF-8?B?8J+Y?= =?UTF-8?B?gA==?= ok')).toBe('😀 ok')
    expect(decodeEncodedWords('x =?x-unknown?Q?abc?= y')).toBe('x =?x-unknown?Q?abc?= y')
    expect(decodeEncodedWords('=?UTF-8?B?***?=')).toBe('=?UTF-8?B?***?=')
    expect(decodeEncodedWords('plain')).toBe('plain')
  })
})

describe('parseMailDate (RFC 5322 §3.3, §4.3)', () => {
  test.each([
    ['Thu, 8 Mar 2005 14:00:00 EDT', 1110304800],
    ['Wed, 14 Apr 2010 12:15:31 -0700 (PDT)', 1271272531],
    ['8 Oct 2011 20:15:58 +0000 (GMT)', 1318104958],
    ['01 Oct 2018 11:20:27 +0200', Date.UTC(2018, 9, 1, 9, 20, 27) / 1000],
    ['Tue,  5 Oct 21 17:37 +1300', Date.UTC(2021, 9, 5, 4, 37) / 1000],
    ['Mon, 07 Apr 2025 23:16:09 Z', Date.UTC(2025, 3, 7, 23, 16, 9) / 1000],
  ])('%s', (value, expected) => {
    expect(parseMailDate(value)).toBe(expected)
  })

  test('not a date', () => {
    expect(parseMailDate('yesterday')).toBeNull()
    expect(parseMailDate('32 Jan 2020 10:00:00 +0000')).toBeNull()
    expect(parseMailDate('1 Foo 2020 10:00:00 +0000')).toBeNull()
  })
})
