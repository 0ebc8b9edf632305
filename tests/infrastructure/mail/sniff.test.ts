import { expect, test } from 'bun:test'
import { fileKind } from '../../../infrastructure/mail/file-kind.ts'
import { sniffFormat } from '../../../infrastructure/mail/sniff.ts'

// What a payload is, by its first bytes (infrastructure/mail/sniff.ts): UTF-16 reports are read by
// the same rules as UTF-8 ones once decoded (XML 1.0 Appendix F), with or without a byte order mark.

const utf16 = (text: string, order: 'le' | 'be', bom: boolean) => {
  const bytes = new Uint8Array((text.length + (bom ? 1 : 0)) * 2)
  const view = new DataView(bytes.buffer)
  const units = (bom ? '\uFEFF' : '') + text
  for (let i = 0; i < units.length; i++) view.setUint16(i * 2, units.charCodeAt(i), order === 'le')
  return bytes
}

const report = '<?xml version="1.0" encoding="UTF-16"?>\n<feedback><report_metadata>'

test('UTF-16 XML in either byte order, with and without its mark, is XML', () => {
  for (const order of ['le', 'be'] as const)
    for (const bom of [true, false]) expect(sniffFormat(utf16(report, order, bom))).toBe('xml')
  // A root element without a declaration, as some reporters send it.
  expect(sniffFormat(utf16('<feedback><version>1.0</version>', 'le', false))).toBe('xml')
})

test('UTF-16 text that is not a report stays unknown, as it would in UTF-8', () => {
  expect(sniffFormat(utf16('<html><body>Your report</body></html>', 'le', true))).toBeNull()
  expect(sniffFormat(utf16('Hello, this is a text part', 'be', true))).toBeNull()
  // JSON in UTF-16 is not a TLS report (RFC 8460 §5.3: UTF-8).
  expect(sniffFormat(utf16('{"organization-name": "x"}', 'le', true))).toBeNull()
})

test('the UTF-8 rules are unchanged', () => {
  const bytes = (text: string) => new TextEncoder().encode(text)
  expect(sniffFormat(bytes(report))).toBe('xml')
  expect(sniffFormat(bytes('\uFEFF  {"a":1}'))).toBe('json')
  expect(sniffFormat(bytes('<!-- x --><xs:schema><feedback>'))).toBe('xml')
  expect(sniffFormat(bytes('<html></html>'))).toBeNull()
  expect(sniffFormat(new Uint8Array([0x1f, 0x8b, 8]))).toBe('gzip')
  expect(sniffFormat(bytes('PK\x03\x04rest'))).toBe('zip')
})

// Found by a sweep of other projects' samples: cry-inc/dmarc-report-viewer's gmxnet.xml written
// with a `dmarc:` prefix on every element and without its XML declaration (optional, XML 1.0 §2.8)
// was taken for a mail header field (`<dmarc:`) and quarantined `no_report_found`.
test('a root element with a namespace prefix is a report, declaration or not', () => {
  const bytes = (text: string) => new TextEncoder().encode(text)
  const prefixed = '<dmarc:feedback xmlns:dmarc="urn:ietf:params:xml:ns:dmarc-2.0">\n  <dmarc:version>1.0'
  expect(sniffFormat(bytes(prefixed))).toBe('xml')
  expect(sniffFormat(bytes(`\uFEFF\r\n${prefixed}`))).toBe('xml')
  expect(sniffFormat(bytes('<!-- exported --><ns0:feedback>'))).toBe('xml')
  expect(fileKind(bytes(prefixed))).toBe('report')
  // A prefix is not any text before "feedback": these are not the element.
  expect(sniffFormat(bytes('<p>Send us your feedback</p>'))).toBeNull()
  expect(sniffFormat(bytes('<div><feedbackform>'))).toBeNull()
  expect(fileKind(bytes('<dmarc:note>x</dmarc:note>'))).toBe('message')
})

test('binary data that starts with { is not taken for a TLS report', () => {
  // A scanned PDF's random bytes: a quarter of a percent of them start with {.
  const binary = new Uint8Array(4096)
  for (let i = 0; i < binary.length; i++) binary[i] = (i * 151 + 7) & 0xff
  binary[0] = 0x7b
  expect(sniffFormat(binary)).toBeNull()
  binary[1] = 0x22 // {" then binary: still not text
  expect(sniffFormat(binary)).toBeNull()
  const bytes = (text: string) => new TextEncoder().encode(text)
  expect(sniffFormat(bytes('{ "organization-name": "Google Inc.",\r\n\t"policies": []}'))).toBe('json')
  expect(sniffFormat(bytes('{}'))).toBe('json')
  expect(sniffFormat(bytes('{x'))).toBeNull()
})
