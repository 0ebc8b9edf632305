import { sniffFormat } from './sniff.ts'

// What a file handed to us is (the raw-report endpoint, `cli import`, the dashboard upload), told by
// its first bytes like every report part (sniff.ts), never by its name:
// - `report`: a bare report, aggregate XML, gzip, zip or TLS-RPT JSON (sniff.ts);
// - `mbox`: a mailbox file, whose first line is an mbox "From " separator line;
// - `message`: one RFC 5322 message (an .eml), which starts with a header field (RFC 5322 §2.2:
//   a name of printable ASCII other than ":", then ":");
// - null: anything else.
// The report check comes first: "{" and "<" are header field characters, but no mail starts with
// a field named `<?xml`, `<feedback` or `{...`, and the mbox separator "From " has a space, which no
// field name has.

export type FileKind = 'report' | 'mbox' | 'message'

const MBOX_SEPARATOR = 'From '

function startsWith(bytes: Uint8Array, text: string): boolean {
  if (bytes.length < text.length) return false
  for (let i = 0; i < text.length; i++) if (bytes[i] !== text.charCodeAt(i)) return false
  return true
}

/** A header field at the start: field-name (1-998 of %d33-57 / %d59-126) then ":" (obsolete WSP allowed). */
function startsWithHeaderField(bytes: Uint8Array): boolean {
  let i = 0
  while (i < bytes.length && i < 998 && bytes[i]! >= 33 && bytes[i]! <= 126 && bytes[i] !== 0x3a) i++
  if (i === 0) return false
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x09)) i++
  return bytes[i] === 0x3a
}

/** The kind of a file from its first bytes (a few KB suffice; see SNIFF_BYTES). */
export function fileKind(head: Uint8Array): FileKind | null {
  if (sniffFormat(head) !== null) return 'report'
  // "From " and then the sender; "From :" (white space before the colon, RFC 5322 §4.5.3's obsolete
  // syntax) is a header field.
  if (startsWith(head, MBOX_SEPARATOR) && ![0x20, 0x09, 0x3a].includes(head[MBOX_SEPARATOR.length] ?? 0x20))
    return 'mbox'
  if (startsWithHeaderField(head)) return 'message'
  return null
}
