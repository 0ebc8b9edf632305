import { DEMO_REPORTERS, DEMO_SOURCES, type DemoReporter, type DemoSource } from './demo-world.ts'

// Generates the demo domain's reports (docs/demo.md): one aggregate report a day from each
// reporter for 30 days (RFC 7489 §7.2, in each reporter's own dialect), failure reports for some of
// the spoofer's messages (RFC 6591 in ARF, RFC 5965) and TLS-RPT reports (RFC 8460 §4). Pure and
// deterministic: the caller passes the clock and a seed, and packs the reports into mail.

export interface DemoAggregate {
  kind: 'aggregate'
  reporter: DemoReporter
  reportId: string
  begin: number
  end: number
  xml: string
}

export interface DemoFailure {
  kind: 'failure'
  reporter: DemoReporter
  arrival: Date
  sourceIp: string
  /** The parts of a `multipart/report; report-type=feedback-report` (RFC 5965 §2). */
  humanReadable: string
  feedbackReport: string
  originalHeaders: string
}

export interface DemoTlsReport {
  kind: 'tls'
  reporter: DemoReporter
  begin: Date
  json: string
}

export type DemoReport = DemoAggregate | DemoFailure | DemoTlsReport

export interface DemoInput {
  domain: string
  /** Reports cover the `days` whole UTC days before `now`'s day. */
  now: Date
  days: number
  seed: number
}

const DAY = 86_400

/** xorshift32: small, deterministic, good enough to vary volumes. */
function generator(seed: number) {
  let state = seed >>> 0 || 0x9e3779b9
  return () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return (state >>> 0) / 4_294_967_296
  }
}

export function demoReports(input: DemoInput): DemoReport[] {
  const random = generator(input.seed)
  const today = Math.floor(input.now.getTime() / 1000 / DAY) * DAY
  const reports: DemoReport[] = []
  for (let daysAgo = input.days - 1; daysAgo >= 0; daysAgo--) {
    const begin = today - (daysAgo + 1) * DAY
    // Weekends carry less mail, as real domains' do.
    const weekday = new Date(begin * 1000).getUTCDay()
    const dayFactor = (weekday === 0 || weekday === 6 ? 0.45 : 1) * (0.85 + random() * 0.3)
    for (const reporter of DEMO_REPORTERS) {
      const rows = DEMO_SOURCES.flatMap((source) => sourceRows(source, reporter, daysAgo, dayFactor, random))
      const id = reportId(reporter, begin, random)
      reports.push({
        kind: 'aggregate',
        reporter,
        reportId: id,
        begin,
        end: begin + DAY - 1,
        xml: aggregateXml(reporter, input.domain, id, begin, rows),
      })
    }
    if (daysAgo < 5) reports.push(...failureReports(input.domain, begin, daysAgo, random))
    if (daysAgo < 7) reports.push(tlsReport(input.domain, begin, random))
  }
  return reports
}

interface Row {
  ip: string
  count: number
  source: DemoSource
}

function sourceRows(
  source: DemoSource,
  reporter: DemoReporter,
  daysAgo: number,
  dayFactor: number,
  random: () => number,
): Row[] {
  if (source.activeDays !== null && !source.activeDays(daysAgo)) return []
  // The spoofer grows towards today, so the latest days cross the alert thresholds.
  const growth = source.activeDays === null ? 1 : 1 + (5 - Math.min(daysAgo, 5)) * 0.6
  const total = Math.round(source.dailyVolume * dayFactor * growth * reporter.share)
  const rows: Row[] = []
  let left = total
  source.ips.forEach((ip, index) => {
    const last = index === source.ips.length - 1
    const count = last ? left : Math.round(left * (0.35 + random() * 0.3))
    left -= count
    if (count > 0) rows.push({ ip, count, source })
  })
  return rows
}

function reportId(reporter: DemoReporter, begin: number, random: () => number): string {
  // Each reporter's id style: Google a long decimal, Microsoft a hex GUID, Yahoo seconds.sequence.
  const digits = (n: number) => Array.from({ length: n }, () => Math.floor(random() * 10)).join('')
  if (reporter.submitter === 'google.com') return `${begin}${digits(9)}`
  if (reporter.submitter === 'yahoo.com') return `${begin}.${digits(6)}`
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('')
  return `${hex.slice(0, 8)}${hex.slice(8, 12)}${hex.slice(12, 16)}${hex.slice(16, 20)}${hex.slice(20)}`
}

const fill = (value: string, domain: string) => value.replace('{domain}', domain)

function aligned(identifier: string, domain: string): boolean {
  // Relaxed alignment (RFC 7489 §3.1.1): the same organizational domain.
  return identifier === domain || identifier.endsWith(`.${domain}`)
}

function aggregateXml(
  reporter: DemoReporter,
  domain: string,
  id: string,
  begin: number,
  rows: Row[],
): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8" ?>\n<feedback>\n']
  if (reporter.verbose) out.push('  <version>1.0</version>\n')
  out.push(
    '  <report_metadata>\n',
    `    <org_name>${reporter.orgName}</org_name>\n`,
    `    <email>${reporter.email}</email>\n`,
    reporter.extraContact === null
      ? ''
      : `    <extra_contact_info>${reporter.extraContact}</extra_contact_info>\n`,
    `    <report_id>${id}</report_id>\n`,
    `    <date_range>\n      <begin>${begin}</begin>\n      <end>${begin + DAY - 1}</end>\n    </date_range>\n`,
    '  </report_metadata>\n',
    '  <policy_published>\n',
    `    <domain>${domain}</domain>\n    <adkim>r</adkim>\n    <aspf>r</aspf>\n    <p>none</p>\n    <sp>none</sp>\n    <pct>100</pct>\n`,
    reporter.verbose ? '    <fo>1</fo>\n' : '',
    '  </policy_published>\n',
  )
  for (const row of rows) {
    const dkim = row.source.auth.dkim.map((s) => ({ ...s, domain: fill(s.domain, domain) }))
    const spfDomain = fill(row.source.auth.spf.domain, domain)
    const dkimAligned = dkim.some((s) => s.result === 'pass' && aligned(s.domain, domain))
    const spfAligned = row.source.auth.spf.result === 'pass' && aligned(spfDomain, domain)
    out.push(
      '  <record>\n    <row>\n',
      `      <source_ip>${row.ip}</source_ip>\n      <count>${row.count}</count>\n`,
      '      <policy_evaluated>\n        <disposition>none</disposition>\n',
      `        <dkim>${dkimAligned ? 'pass' : 'fail'}</dkim>\n        <spf>${spfAligned ? 'pass' : 'fail'}</spf>\n`,
      '      </policy_evaluated>\n    </row>\n',
      '    <identifiers>\n',
      reporter.verbose
        ? `      <envelope_to>${reporter.submitter === 'yahoo.com' ? 'yahoo.com' : 'outlook.com'}</envelope_to>\n`
        : '',
      reporter.verbose ? `      <envelope_from>${spfDomain}</envelope_from>\n` : '',
      `      <header_from>${domain}</header_from>\n    </identifiers>\n`,
      '    <auth_results>\n',
      ...dkim.map(
        (s) =>
          `      <dkim>\n        <domain>${s.domain}</domain>\n        <selector>${s.selector}</selector>\n        <result>${s.result}</result>\n      </dkim>\n`,
      ),
      `      <spf>\n        <domain>${spfDomain}</domain>\n`,
      reporter.verbose ? '        <scope>mfrom</scope>\n' : '',
      `        <result>${row.source.auth.spf.result}</result>\n      </spf>\n`,
      '    </auth_results>\n  </record>\n',
    )
  }
  out.push('</feedback>\n')
  return out.join('')
}

const SPOOF_SUBJECTS = [
  'Invoice overdue: action required',
  'Your password expires today',
  'Payment confirmation',
]

function failureReports(domain: string, begin: number, daysAgo: number, random: () => number): DemoFailure[] {
  const spoofer = DEMO_SOURCES.find((s) => s.activeDays !== null)!
  // Yahoo-like and smaller receivers send failure reports; Google and Microsoft send none (RFC 7489
  // §7.3 is optional, and the big mailbox providers do not implement it).
  const reporter = DEMO_REPORTERS.find((r) => r.submitter === 'yahoo.com')!
  const count = daysAgo < 2 ? 2 : 1
  return Array.from({ length: count }, (_, n) => {
    const arrival = new Date((begin + 3_600 * (8 + n * 5) + Math.floor(random() * 3_000)) * 1000)
    const ip = spoofer.ips[Math.floor(random() * spoofer.ips.length)]!
    const subject = SPOOF_SUBJECTS[Math.floor(random() * SPOOF_SUBJECTS.length)]!
    const date = arrival.toUTCString().replace('GMT', '+0000')
    const messageId = `<${Math.floor(random() * 1e12).toString(36)}@mail.${domain}>`
    return {
      kind: 'failure' as const,
      reporter,
      arrival,
      sourceIp: ip,
      humanReadable: `This is an authentication failure report for an email message received from IP ${ip} on ${date}.\r\n`,
      feedbackReport: [
        'Feedback-Type: auth-failure',
        'User-Agent: dmarcwatch-demo/1.0',
        'Version: 1',
        `Original-Mail-From: <billing@${domain}>`,
        'Original-Rcpt-To: <someone@yahoo.com>',
        `Arrival-Date: ${date}`,
        `Source-IP: ${ip}`,
        `Reported-Domain: ${domain}`,
        'Auth-Failure: dmarc',
        'Delivery-Result: delivered',
        `Authentication-Results: mta.yahoo.com; dmarc=fail (p=none) header.from=${domain}; spf=fail smtp.mailfrom=${domain}; dkim=none`,
        '',
      ].join('\r\n'),
      originalHeaders: [
        `Received: from unknown (HELO mail.${domain}) ([${ip}]) by mta.yahoo.com; ${date}`,
        `From: "Accounts" <billing@${domain}>`,
        'To: someone@yahoo.com',
        `Subject: ${subject}`,
        `Date: ${date}`,
        `Message-ID: ${messageId}`,
        '',
      ].join('\r\n'),
    }
  })
}

function tlsReport(domain: string, begin: number, random: () => number): DemoTlsReport {
  const reporter = DEMO_REPORTERS.find((r) => r.submitter === 'google.com')!
  const success = 900 + Math.floor(random() * 400)
  const failures = Math.floor(random() * 4)
  const start = new Date(begin * 1000)
  const end = new Date((begin + DAY - 1) * 1000)
  // RFC 8460 §4.4: keys as the RFC spells them (hyphenated).
  const report = {
    'organization-name': 'Google Inc.',
    'date-range': { 'start-datetime': start.toISOString(), 'end-datetime': end.toISOString() },
    'contact-info': 'smtp-tls-reporting@google.com',
    'report-id': `${start.toISOString().slice(0, 10)}T00:00:00Z_${domain}`,
    policies: [
      {
        policy: { 'policy-type': 'no-policy-found', 'policy-domain': domain },
        summary: { 'total-successful-session-count': success, 'total-failure-session-count': failures },
        ...(failures === 0
          ? {}
          : {
              'failure-details': [
                {
                  'result-type': 'certificate-expired',
                  'sending-mta-ip': '209.85.220.41',
                  'receiving-mx-hostname': `mx.${domain}`,
                  'failed-session-count': failures,
                },
              ],
            }),
      },
    ],
  }
  return { kind: 'tls', reporter, begin: start, json: JSON.stringify(report) }
}
