import { expect, test } from 'bun:test'
import { showable, showsSomething } from '../../../domain/shared/control-characters.ts'

// Text from elsewhere, shown and stored (a DNS provider's zone names on an import's results): a
// hostile-input sweep found a zone listed as `a<BEL>b.test` echoed with its BEL into the dashboard.

test('showable replaces C0 and C1 controls, DEL and bidirectional controls with U+FFFD', () => {
  expect(showable('a\u0007b.test')).toBe('a\ufffdb.test')
  expect(showable('x\u0000\u001f\u007f\u0085\u009f\u202e\u2066y')).toBe(`x${'\ufffd'.repeat(7)}y`)
  expect(showable('mail.example.com')).toBe('mail.example.com')
  expect(showable('müller.example')).toBe('müller.example')
})

test('showsSomething is false for white space and invisible characters alone', () => {
  expect(showsSomething('Acme')).toBe(true)
  expect(showsSomething('\u200b\u2060\ufeff \u3164')).toBe(false)
})
