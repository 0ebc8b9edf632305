import { randomBytes } from 'node:crypto'
import { zipSync } from 'fflate'
import { aggregateXml } from './report-generator.ts'

// Large report messages for the memory benchmark (bench/ingest-memory.ts), each near the 64 MB
// intake limit: what reporters and forwarders actually send that gets that big. A report's
// gzip is ~30x smaller than its XML (100,000 records: 46 MB of XML, 1.5 MB gzipped), so the bulk
// of a 60 MB message is attachments that are no report (a scanned PDF, a forwarded message's
// files), which the service must read past without holding them.

export const MESSAGE_BYTES = 60 * 1000 * 1000

const encoder = new TextEncoder()

/** Base64 in 76-character lines (RFC 2045 §6.8). */
function base64Lines(bytes: Uint8Array): string {
  const text = Buffer.from(bytes).toString('base64')
  const lines: string[] = []
  for (let at = 0; at < text.length; at += 76) lines.push(text.slice(at, at + 76))
  return lines.join('\r\n')
}

interface Part {
  type: string
  filename: string
  bytes: Uint8Array
}

function mime(parts: Part[], headers: { to: string; subject: string }): string {
  const boundary = `----=_bench_${randomBytes(6).toString('hex')}`
  const body = parts
    .map(
      (part) =>
        `--${boundary}\r\nContent-Type: ${part.type}; name="${part.filename}"\r\n` +
        `Content-Disposition: attachment; filename="${part.filename}"\r\n` +
        `Content-Transfer-Encoding: base64\r\n\r\n${base64Lines(part.bytes)}\r\n`,
    )
    .join('')
  return [
    'From: noreply-dmarc-support@google.com',
    `To: ${headers.to}`,
    `Subject: ${headers.subject}`,
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset="UTF-8"',
    '',
    'This is an aggregate report.',
    '',
    `${body}--${boundary}--\r\n`,
  ].join('\r\n')
}

/** Random bytes whose base64 fills the message up to `total` bytes. */
function padding(total: number, used: number): Uint8Array {
  return randomBytes(Math.max(0, Math.floor(((total - used - 400) * 3 * 76) / (4 * 78))))
}

export type BigKind = 'gzip' | 'zip' | 'xml' | 'forwarded' | 'none'

export interface BigMessage {
  kind: BigKind
  bytes: Uint8Array
  records: number
}

/**
 * A message of about `total` bytes: an aggregate report of `records` records (gzip, zip, plain
 * XML, or gzip inside a forwarded message/rfc822), or none, and attachments that are no report
 * (`pieces` of them) making up the rest.
 */
export function bigMessage(input: {
  to: string
  domain: string
  reportId: string
  kind: BigKind
  records: number
  pieces?: number
  total?: number
  seed: number
}): BigMessage {
  const total = input.total ?? MESSAGE_BYTES
  const parts: Part[] = []
  const name = `google.com!${input.domain}!1700000000!1700086399`
  if (input.kind !== 'none') {
    const xml = encoder.encode(
      aggregateXml({
        domain: input.domain,
        reportId: input.reportId,
        records: input.records,
        seed: input.seed,
      }),
    )
    if (input.kind === 'gzip')
      parts.push({ type: 'application/gzip', filename: `${name}.xml.gz`, bytes: Bun.gzipSync(xml) })
    if (input.kind === 'zip')
      parts.push({
        type: 'application/zip',
        filename: `${name}.zip`,
        bytes: zipSync({ [`${name}.xml`]: xml }),
      })
    if (input.kind === 'xml') parts.push({ type: 'text/xml', filename: `${name}.xml`, bytes: xml })
    if (input.kind === 'forwarded') {
      const inner = mime(
        [{ type: 'application/gzip', filename: `${name}.xml.gz`, bytes: Bun.gzipSync(xml) }],
        {
          to: input.to,
          subject: `Report domain: ${input.domain} Report-ID: ${input.reportId}`,
        },
      )
      parts.push({ type: 'message/rfc822', filename: 'forwarded.eml', bytes: encoder.encode(inner) })
    }
  }
  const used = mime(parts, { to: input.to, subject: 'x' }).length
  const pieces = input.pieces ?? 1
  const fill = padding(total, used + pieces * 200)
  const size = Math.floor(fill.byteLength / pieces)
  for (let i = 0; i < pieces; i++) {
    parts.push({
      type: 'application/pdf',
      filename: `scan-${i + 1}.pdf`,
      bytes: fill.subarray(i * size, (i + 1) * size),
    })
  }
  const subject = `Report domain: ${input.domain} Submitter: google.com Report-ID: ${input.reportId}`
  return {
    kind: input.kind,
    bytes: encoder.encode(mime(parts, { to: input.to, subject })),
    records: input.kind === 'none' ? 0 : input.records,
  }
}
