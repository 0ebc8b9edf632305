// Builds small RFC 5322 / MIME messages for the extraction tests, so that each test shows the
// exact labelling (or mislabelling) it is about.

const CRLF = '\r\n'

export interface Part {
  headers: string[]
  body: string
}

export function base64Lines(bytes: Uint8Array): string {
  const encoded = Buffer.from(bytes).toString('base64')
  return encoded.replace(/.{1,76}/g, (line) => `${line}${CRLF}`).trimEnd()
}

export function attachment(contentType: string, filename: string | null, bytes: Uint8Array): Part {
  return {
    headers: [
      `Content-Type: ${contentType}${filename === null ? '' : `; name="${filename}"`}`,
      'Content-Transfer-Encoding: base64',
      `Content-Disposition: attachment${filename === null ? '' : `; filename="${filename}"`}`,
    ],
    body: base64Lines(bytes),
  }
}

export function textPart(text: string, contentType = 'text/plain; charset=utf-8'): Part {
  return { headers: [`Content-Type: ${contentType}`, 'Content-Transfer-Encoding: 8bit'], body: text }
}

const envelope = [
  'From: reporter@example.net',
  'To: dmarc@example.com',
  'Subject: Report domain: example.com Submitter: example.net',
  'Date: Tue, 1 Apr 2025 00:00:00 +0000',
  'Message-ID: <test@example.net>',
  'MIME-Version: 1.0',
]

export function multipart(parts: Part[], subtype = 'mixed', extraParams = ''): string {
  const boundary = `b-${Math.random().toString(36).slice(2)}`
  const body = parts
    .map((part) => `--${boundary}${CRLF}${part.headers.join(CRLF)}${CRLF}${CRLF}${part.body}${CRLF}`)
    .join('')
  return [
    ...envelope,
    `Content-Type: multipart/${subtype}; boundary="${boundary}"${extraParams}`,
    '',
    'This is a multi-part message in MIME format.',
    `${body}--${boundary}--`,
    '',
  ].join(CRLF)
}

/** A message whose whole body is the one part (Google and Mimecast send reports like this). */
export function singlePart(part: Part): string {
  return [...envelope, ...part.headers, '', part.body, ''].join(CRLF)
}

export const bytesOf = (text: string) => new TextEncoder().encode(text)
