import { MAX_EMAIL_LENGTH } from '../../domain/shared/email-address.ts'

// A message fetched from a mailbox has lost its SMTP envelope; the delivering MTA's trace headers
// are the closest thing left. Delivered-To (Postfix, Exim, Gmail) and X-Original-To (Postfix)
// name the mailbox the message was delivered to, even when it came via an alias or a forward;
// the To header is only what the sender wrote, so it comes last.

const HEADER_ORDER = ['delivered-to', 'x-original-to', 'to']
// The header block is small; a message without a blank line within this prefix has no usable headers.
export const MAX_HEADER_BYTES = 256 * 1024

function headerBlock(raw: Uint8Array): string {
  const limit = Math.min(raw.byteLength, MAX_HEADER_BYTES)
  let end = limit
  for (let i = 0; i < limit - 1; i++) {
    if (raw[i] !== 0x0a) continue
    // LF LF or LF CR LF ends the header block (both bare-LF and CRLF files exist in mailboxes).
    if (raw[i + 1] === 0x0a || (raw[i + 1] === 0x0d && raw[i + 2] === 0x0a)) {
      end = i
      break
    }
  }
  return new TextDecoder().decode(raw.subarray(0, end))
}

/** Header name (lower case) → values in the order they appear, continuation lines unfolded. */
export function parseHeaders(raw: Uint8Array): Map<string, string[]> {
  const headers = new Map<string, string[]>()
  const unfolded = headerBlock(raw).replace(/\r?\n[ \t]+/g, ' ')
  for (const line of unfolded.split(/\r?\n/)) {
    // The value is trimmed without a regex: `(.*?)\s*$` backtracks quadratically on a long run of
    // white space inside a value, and this block is up to 256 KiB of a stranger's mail.
    const field = /^([!-9;-~]+):/.exec(line)
    if (!field) continue
    const value = line
      .slice(field[0].length)
      .replace(/^[ \t]+/, '')
      .trimEnd()
    // A lone CR (or another line terminator) inside the value: not a header line.
    if (/[\r\u2028\u2029]/.test(value)) continue
    const name = field[1]!.toLowerCase()
    const values = headers.get(name) ?? []
    values.push(value)
    headers.set(name, values)
  }
  return headers
}

/** The first address in a header value: `Name <a@b>, c@d` → `a@b`. */
export function firstAddress(value: string): string | null {
  const bracketed = /<([^<>\s]+@[^<>\s]+)>/.exec(value)
  if (bracketed) return bracketed[1]!
  // Tried only where a run of address characters begins (the lookbehind): from every position of a
  // long run without `@`, the match took time quadratic in its length.
  const bare = /(?<![^\s<>,;:"()])[^\s<>,;:"()]+@[^\s<>,;:"()]+/.exec(value)
  return bare ? bare[0] : null
}

/**
 * The recipient of a message taken from a mailbox: the first address of the first of Delivered-To,
 * X-Original-To and To that has one. The topmost Delivered-To is the one added last, i.e. the
 * final delivery, which is the address this mailbox received the message for.
 */
export function headerRecipient(raw: Uint8Array): string | null {
  const headers = parseHeaders(raw)
  for (const name of HEADER_ORDER) {
    for (const value of headers.get(name) ?? []) {
      const address = firstAddress(value)
      // RFC 5321 §4.5.3.1.3: no address is longer than 254 characters; a 100 KB "address" was
      // carried whole into the refusal's log line.
      if (address !== null && address.length <= MAX_EMAIL_LENGTH) return address
    }
  }
  return null
}
