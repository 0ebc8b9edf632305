import { describe, expect, test } from 'bun:test'
import { fileKind } from '../../../infrastructure/mail/file-kind.ts'

const enc = (text: string) => new TextEncoder().encode(text)
const file = async (path: string) => new Uint8Array(await Bun.file(path).arrayBuffer())
const AGG = 'tests/fixtures/dmarc-aggregate'

describe('fileKind', () => {
  test('report files by their first bytes', async () => {
    for (const path of [
      `${AGG}/parsedmarc/extract_report/nice-input.xml`,
      `${AGG}/parsedmarc/extract_report/nice-input.xml.gz`,
      `${AGG}/parsedmarc/extract_report/nice-input.xml.zip`,
      'tests/fixtures/tls-rpt/rfc8460-example.json',
    ])
      expect(fileKind(await file(path))).toBe('report')
  })

  test('an email, an mbox, and anything else', async () => {
    expect(fileKind(await file(`${AGG}/mox/google.eml`))).toBe('message')
    expect(fileKind(enc('Return-Path: <a@example.org>\r\n'))).toBe('message')
    expect(fileKind(enc('From : obsolete@example.org\r\n'))).toBe('message')
    expect(fileKind(enc('From: a@example.org\n'))).toBe('message')
    expect(fileKind(enc('From MAILER-DAEMON Fri Jul  8 12:08:34 2011\nFrom: a@example.org\n'))).toBe('mbox')
    expect(fileKind(enc('hello world'))).toBeNull()
    expect(fileKind(enc('<html><body>x</body></html>'))).toBeNull()
    expect(fileKind(new Uint8Array([0x89, 0x50, 0x4e, 0x47]))).toBeNull()
    expect(fileKind(new Uint8Array(0))).toBeNull()
  })
})
