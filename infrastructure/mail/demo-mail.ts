import { zipSync } from 'fflate'
import type { DemoAggregate, DemoFailure, DemoReport, DemoTlsReport } from '../../domain/demo/demo-reports.ts'

// Packs the demo's generated reports (domain/demo/demo-reports.ts) into report mail as the
// reporters send it, so the demo goes through the same intake, MIME walk, decompression and
// parsing as real mail (docs/demo.md): aggregate reports as a zip or .xml.gz attachment
// (RFC 7489 §7.2.1.1), failure reports as ARF (RFC 5965 §2), TLS-RPT as application/tlsrpt+gzip
// (RFC 8460 §5.3).

const encoder = new TextEncoder()

function base64Lines(bytes: Uint8Array): string {
  // RFC 2045 §6.8: lines of at most 76 characters.
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')
  return (text.match(/.{1,76}/g) ?? []).join('\r\n')
}

function mailDate(date: Date): string {
  return date.toUTCString().replace('GMT', '+0000')
}

interface Envelope {
  from: string
  to: string
  subject: string
  date: Date
  messageId: string
}

function headers(envelope: Envelope, contentType: string): string {
  return [
    `From: ${envelope.from}`,
    `To: ${envelope.to}`,
    `Subject: ${envelope.subject}`,
    `Date: ${mailDate(envelope.date)}`,
    `Message-ID: ${envelope.messageId}`,
    'MIME-Version: 1.0',
    `Content-Type: ${contentType}`,
  ].join('\r\n')
}

function aggregateMessage(report: DemoAggregate, domain: string, to: string): string {
  const { reporter } = report
  const base = `${reporter.submitter}!${domain}!${report.begin}!${report.end}`
  const xml = encoder.encode(report.xml)
  const [filename, type, body] =
    reporter.packing === 'zip'
      ? [`${base}.zip`, 'application/zip', zipSync({ [`${base}.xml`]: xml })]
      : [`${base}.xml.gz`, 'application/gzip', Bun.gzipSync(xml)]
  const boundary = `demo-${report.reportId}`
  const envelope = {
    from: reporter.email,
    to,
    subject: `Report Domain: ${domain} Submitter: ${reporter.submitter} Report-ID: <${report.reportId}>`,
    date: new Date((report.end + 1 + 3_600) * 1000),
    messageId: `<${report.reportId}@${reporter.submitter}>`,
  }
  return [
    headers(envelope, `multipart/mixed; boundary="${boundary}"`),
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    `This is an aggregate report from ${reporter.orgName}.`,
    `--${boundary}`,
    `Content-Type: ${type}; name="${filename}"`,
    `Content-Disposition: attachment; filename="${filename}"`,
    'Content-Transfer-Encoding: base64',
    '',
    base64Lines(body),
    `--${boundary}--`,
    '',
  ].join('\r\n')
}

function failureMessage(report: DemoFailure, domain: string, to: string): string {
  const boundary = `demo-arf-${report.arrival.getTime()}`
  const envelope = {
    from: report.reporter.email,
    to,
    subject: `[DMARC Failure Report] ${domain} from ${report.sourceIp}`,
    date: new Date(report.arrival.getTime() + 60_000),
    messageId: `<arf-${report.arrival.getTime()}@${report.reporter.submitter}>`,
  }
  return [
    headers(envelope, `multipart/report; report-type=feedback-report; boundary="${boundary}"`),
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=us-ascii',
    '',
    report.humanReadable,
    `--${boundary}`,
    'Content-Type: message/feedback-report',
    '',
    report.feedbackReport,
    `--${boundary}`,
    'Content-Type: text/rfc822-headers',
    '',
    report.originalHeaders,
    `--${boundary}--`,
    '',
  ].join('\r\n')
}

function tlsMessage(report: DemoTlsReport, domain: string, to: string): string {
  const day = report.begin.toISOString().slice(0, 10)
  const filename = `google.com!${domain}!${day}!${day}.json.gz`
  const boundary = `demo-tls-${day}`
  const envelope = {
    from: 'noreply-smtp-tls-reporting@google.com',
    to,
    subject: `Report Domain: ${domain} Submitter: google.com Report-ID: <${day}T00:00:00Z_${domain}>`,
    date: new Date(report.begin.getTime() + 86_400_000 + 7_200_000),
    messageId: `<tls-${day}-${domain}@google.com>`,
  }
  return [
    // RFC 8460 §5.3: the report is a multipart/report of report-type tlsrpt.
    `TLS-Report-Domain: ${domain}`,
    'TLS-Report-Submitter: google.com',
    headers(envelope, `multipart/report; report-type=tlsrpt; boundary="${boundary}"`),
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=us-ascii',
    '',
    `This is an aggregate TLS report from google.com for ${domain}.`,
    `--${boundary}`,
    `Content-Type: application/tlsrpt+gzip; name="${filename}"`,
    `Content-Disposition: attachment; filename="${filename}"`,
    'Content-Transfer-Encoding: base64',
    '',
    base64Lines(Bun.gzipSync(encoder.encode(report.json))),
    `--${boundary}--`,
    '',
  ].join('\r\n')
}

/** One report mail, addressed to the account's report address. */
export function demoMessage(report: DemoReport, domain: string, to: string): Uint8Array {
  const text =
    report.kind === 'aggregate'
      ? aggregateMessage(report, domain, to)
      : report.kind === 'failure'
        ? failureMessage(report, domain, to)
        : tlsMessage(report, domain, to)
  return encoder.encode(text)
}
