import { describe, expect, test } from 'bun:test'
import {
  type FailureReportParts,
  type ForensicReport,
  parseFailureReport,
} from '../../../domain/reports/forensic.ts'
import { forensicReportForStorage, redactLocalParts } from '../../../domain/reports/forensic-redaction.ts'
import { extractReports } from '../../../infrastructure/mail/extract-reports.ts'

const FORENSIC = 'tests/fixtures/dmarc-forensic'
const LIMITS = {
  maxDecompressedBytes: 1024 * 1024,
  maxZipEntries: 10,
  maxCompressionRatio: 100,
  maxParts: 100,
}

/** The MIME split is infrastructure (mailparser); the domain parser gets its result. */
async function partsOf(file: string): Promise<FailureReportParts> {
  const result = await extractReports(await Bun.file(`${FORENSIC}/${file}`).bytes(), LIMITS)
  const payload = result.ok ? result.value.payloads[0] : undefined
  if (payload?.kind !== 'feedback-report') throw new Error(`${file}: no feedback report extracted`)
  return payload.parts
}

async function reportOf(file: string): Promise<ForensicReport> {
  const parsed = parseFailureReport(await partsOf(file))
  if (!parsed.ok) throw new Error(`${file}: ${JSON.stringify(parsed.error)}`)
  return parsed.report
}

const sha256 = (value: string) => new Bun.CryptoHasher('sha256').update(value).digest('hex')
const sha256Bytes = (value: Uint8Array) => new Bun.CryptoHasher('sha256').update(value).digest('hex')

test('the fixtures are byte-for-byte the upstream files (CRLF kept)', async () => {
  const sums = (await Bun.file(`${FORENSIC}/SHA256SUMS`).text()).trim().split('\n')
  expect(sums).toHaveLength(18)
  for (const line of sums) {
    const [sum, path] = [line.slice(0, 64), line.slice(66)]
    expect(`${path} ${sha256Bytes(await Bun.file(`${FORENSIC}/${path}`).bytes())}`).toBe(`${path} ${sum}`)
  }
  const crlf = await Bun.file(`${FORENSIC}/parsedmarc/dmarc_ruf_report_linkedin.crlf.eml`).text()
  expect(crlf.split('\r\n').length).toBe(crlf.split('\n').length)
})

describe('parsedmarc failure samples', () => {
  test('DMARC Failure Report for domain.de (feedback-report part named "report", encoded From)', async () => {
    const report = await reportOf(
      'parsedmarc/DMARC Failure Report for domain.de (mail-from=sharepoint@domain.de, ip=10.10.10.10).eml',
    )
    expect(report).toMatchObject({
      format: 'arf',
      feedbackType: 'auth-failure',
      version: '1.0',
      userAgent: 'Lua/1.0',
      sourceIp: '10.10.10.10',
      reportedDomains: ['domain.de'],
      authFailure: 'dmarc',
      deliveryResult: 'smg-policy-action',
      originalMailFrom: 'sharepoint@domain.de',
      originalRcptTo: ['peter.pan@domain.de'],
      arrivalTime: Date.UTC(2018, 9, 1, 9, 20, 27) / 1000,
      authenticationResults: ['dmarc=fail (p=none, dis=none) header.from=domain.de'],
      original: {
        from: '"Interaktive Wettbewerber-Übersicht" <sharepoint@domain.de>',
        to: '<peter.pan@domain.de>',
        subject: 'Subject',
        date: '01 Oct 2018 11:20:27 +0200',
        messageId: '<38.E7.30937.BD6E1BB5@ mailrelay.de>',
      },
    })
  })

  test('Netease (multipart/mixed, base64 feedback part, no Auth-Failure)', async () => {
    const report = await reportOf('parsedmarc/[Netease DMARC Failure Report] Rent Reminder.eml')
    expect(report).toMatchObject({
      format: 'arf',
      feedbackType: 'auth-failure',
      userAgent: 'NtesDmarcReporter/1.0',
      sourceIp: '167.89.69.24',
      reportedDomains: ['cardinal.com'],
      authFailure: null,
      identityAlignment: ['spf', 'dkim'],
      deliveryResult: 'delivered',
      dkimDomain: 'entrata.com',
      originalMailFrom: 'bounces+1137616-c1ad-xsj399=163.com@email.entrata.com',
      originalEnvelopeId: 'N8CowEApcUPo6q1bnXlMAA--.44392S3',
      arrivalTime: Date.UTC(2018, 8, 28, 8, 48, 42) / 1000,
      original: {
        from: '700 on Washington <info@cardinal.com>',
        subject: 'Rent Reminder',
        messageId: '<oguVx1AxQayV5Sv2nYK-rA@ismtpd0007p1las1.sendgrid.net>',
      },
    })
  })

  test('LinkedIn, LF and CRLF variants parse to the same report', async () => {
    const lf = await reportOf('parsedmarc/dmarc_ruf_report_linkedin.eml')
    const crlf = await reportOf('parsedmarc/dmarc_ruf_report_linkedin.crlf.eml')
    expect(crlf).toEqual(lf)
    expect(lf).toMatchObject({
      sourceIp: '10.10.10.10',
      reportedDomains: ['example.com'],
      authFailure: 'dmarc',
      deliveryResult: 'delivered',
      // "Original-Mail-From:" is present but empty.
      originalMailFrom: null,
      originalRcptTo: ['recipient@linkedin.com'],
      original: {
        from: 'Sender <sender@example.com>',
        to: 'LinkedIn <recipient@linkedin.com>',
        subject: 'Subject line, could be UTF8 encoded',
        messageId: '<01010101010101010101010101010101@ABAB01MS0016.someserver.loc>',
      },
    })
  })

  test('Exim plain text without an ARF part', async () => {
    const parts = await partsOf('parsedmarc/exim_plain_text_only_no_arf_part.eml')
    expect(parts.feedbackReport).toBeNull()
    expect(parts.originalHeaders).toBeNull()
    const report = await reportOf('parsedmarc/exim_plain_text_only_no_arf_part.eml')
    expect(report).toMatchObject({
      format: 'plain-text',
      feedbackType: 'auth-failure',
      sourceIp: '203.0.113.68',
      reportedDomains: ['example.com'],
      authFailure: 'dmarc',
      identityAlignment: ['none'],
      arrivalDate: 'Mon, 07 Apr 2025 23:16:09 +0200',
      arrivalTime: Date.UTC(2025, 3, 7, 21, 16, 9) / 1000,
      original: {
        from: '<user@example.com>',
        to: '<user@example.com>',
        subject: 'Payment from your account.',
        date: 'Mon, 7 Apr 2025 10:10:06 -0600',
        messageId: '<134117F8-2145-AECE-9CCA-25FC98731341@example.com>',
      },
    })
  })
})

// mail-auth's serde names → the values this parser keeps (lower-case, as written in the report).
const kebab = (value: string) => value.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase()
const enumValue = (value: string) =>
  value === 'Unspecified' ? null : value === 'BodyHash' ? 'bodyhash' : kebab(value)
const unbracket = (value: string | null) => (value === null ? null : value.replace(/^<|>$/g, ''))
const squash = (value: string) => value.replace(/\s+/g, ' ').trim()

describe('stalwart mail-auth ARF samples, against their reference values', () => {
  const expectedOriginal: Record<string, Partial<Record<'from' | 'subject' | 'messageId', string | null>>> = {
    '001': {
      from: '<somespammer@example.net>',
      subject: 'Earn money',
      messageId: '8787KJKJ3K4J3K4J3K4J3.mail@example.net',
    },
    // RFC 5322 §2.1: the empty line after Received ends the header section; To and Subject are body.
    '002': { from: '<somespammer@example.net>', subject: null, messageId: null },
    '003': { from: 'randomuser@example.net', subject: 'This is a test', messageId: null },
    '004': { from: '"Rolf Bader" <info@interpublication.org>', subject: 'Wir kaufen dein Auto!' },
    '005': {
      from: 'anexample@a.sender.example',
      subject: 'You have a new bill from your bank',
      messageId: '<87913910.1318094604546@out.sender.example>',
    },
  }
  for (const name of ['001', '002', '003', '004', '005']) {
    test(`${name}.eml`, async () => {
      const report = await reportOf(`stalwart-mail-auth/${name}.eml`)
      const json = await Bun.file(`${FORENSIC}/stalwart-mail-auth/${name}.json`).json()
      expect(report.format).toBe('arf')
      expect(report.feedbackType).toBe(kebab(json.feedback_type))
      expect(report.version).toBe(String(json.version))
      expect(report.userAgent).toBe(json.user_agent)
      expect(report.arrivalTime).toBe(json.arrival_date)
      expect(report.sourceIp).toBe(json.source_ip)
      expect(report.reportingMta).toBe(json.reporting_mta)
      expect(report.incidents).toBe(json.incidents)
      expect(report.originalEnvelopeId).toBe(json.original_envelope_id)
      expect(report.originalMailFrom).toBe(unbracket(json.original_mail_from))
      expect(report.originalRcptTo).toEqual(
        json.original_rcpt_to === null ? [] : [json.original_rcpt_to.replace(/^<|>$/g, '')],
      )
      expect(report.reportedDomains).toEqual(json.reported_domain)
      expect(report.reportedUris).toEqual(json.reported_uri)
      expect(report.authenticationResults).toEqual(json.authentication_results.map(squash))
      expect(report.authFailure).toBe(enumValue(json.auth_failure))
      expect(report.deliveryResult).toBe(enumValue(json.delivery_result))
      expect(report.identityAlignment).toEqual(
        json.identity_alignment === 'Unspecified' ? [] : expect.anything(),
      )
      expect(report.dkimDomain).toBe(json.dkim_domain)
      expect(report.dkimIdentity).toBe(json.dkim_identity)
      expect(report.dkimSelector).toBe(json.dkim_selector)
      expect(report.spfDns).toBe(json.spf_dns)
      expect(report.original).toMatchObject(expectedOriginal[name]!)
      // Where mail-auth kept the original headers, ours come from the same lines.
      if (json.headers !== null) {
        expect(json.headers).toContain(`From: ${report.original!.from}`)
        expect(json.headers).toContain(`Subject: ${report.original!.subject}`)
      }
      // Bodies are never kept: not the spam text, not the DKIM canonicalised body.
      expect(JSON.stringify(report)).not.toMatch(/Spam Spam|just making sure|VGhpcyBpcyBhIG1lc3NhZ2U/)
    })
  }
})

describe('redaction of local parts', () => {
  test('replaces local parts with stable tokens and keeps domains', async () => {
    const report = await reportOf('parsedmarc/dmarc_ruf_report_linkedin.eml')
    const redacted = redactLocalParts(report, sha256)
    const token = `redacted-${sha256('recipient@linkedin.com').slice(0, 8)}`
    expect(redacted.localPartsRedacted).toBe(true)
    expect(redacted.originalRcptTo).toEqual([`${token}@linkedin.com`])
    expect(redacted.original).toMatchObject({
      from: `Sender <redacted-${sha256('sender@example.com').slice(0, 8)}@example.com>`,
      to: `LinkedIn <${token}@linkedin.com>`,
      messageId: report.original!.messageId,
    })
    expect(redacted.reportedDomains).toEqual(report.reportedDomains)
    expect(JSON.stringify(redacted)).not.toMatch(/\b(recipient|sender)@/)
    expect(redactLocalParts(redacted, sha256)).toEqual(redacted)
  })

  test('addresses inside display names, SRS-style local parts and Authentication-Results', async () => {
    const report = await reportOf('parsedmarc/[Netease DMARC Failure Report] Rent Reminder.eml')
    const redacted = redactLocalParts(report, sha256)
    const mailFrom = `redacted-${sha256('bounces+1137616-c1ad-xsj399=163.com@email.entrata.com').slice(0, 8)}`
    expect(redacted.originalMailFrom).toBe(`${mailFrom}@email.entrata.com`)
    expect(redacted.authenticationResults[0]).toContain(`smtp.mailfrom=${mailFrom}@email.entrata.com`)
    expect(redacted.authenticationResults[0]).toContain('header.d=entrata.com')
    const to = `redacted-${sha256('redacted@163.com').slice(0, 8)}@163.com`
    expect(redacted.original?.to).toBe(`"${to}" <${to}>`)
    expect(JSON.stringify(redacted)).not.toContain('xsj399')
  })

  test('an address without a local part (DKIM-Identity @domain) is left alone', async () => {
    const redacted = redactLocalParts(await reportOf('stalwart-mail-auth/005.eml'), sha256)
    expect(redacted.dkimIdentity).toBe('@sender.example')
    expect(redacted.originalMailFrom).toMatch(/^redacted-[0-9a-f]{8}@a\.sender\.example$/)
  })

  test('mailto: URIs are redacted too', async () => {
    const redacted = redactLocalParts(await reportOf('stalwart-mail-auth/002.eml'), sha256)
    expect(redacted.reportedUris).toEqual([
      'http://example.net/earn_money.html',
      `mailto:redacted-${sha256('user@example.com').slice(0, 8)}@example.com`,
    ])
  })

  test('the hash sees the lower-cased address; a hash that is not hex is refused', async () => {
    const seen: string[] = []
    const report = await reportOf('stalwart-mail-auth/003.eml')
    redactLocalParts(
      { ...report, original: null, authenticationResults: [], originalRcptTo: ['Mixed.Case@Example.COM'] },
      (value) => {
        seen.push(value)
        return 'abcdef0123456789'
      },
    )
    expect(seen).toEqual(['randomuser@example.net', 'mixed.case@example.com'])
    expect(() => redactLocalParts(report, () => 'not hex at all')).toThrow('hex')
  })

  test('storage redacts by default; an account may opt out', async () => {
    const report = await reportOf('stalwart-mail-auth/003.eml')
    expect(forensicReportForStorage(report, { hash: sha256 }).originalMailFrom).toMatch(/^redacted-/)
    expect(forensicReportForStorage(report, { hash: sha256, keepLocalParts: true })).toEqual(report)
  })
})
