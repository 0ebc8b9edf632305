import { describe, expect, test } from 'bun:test'
import { MAX_ORGANIZATION_NAME, normalizeOrganizationName } from '../../../domain/organizations/use-cases.ts'

// The rules of an organization name, shared by create and rename (docs/api.md, Organizations).

const refusal = (raw: string) => {
  const result = normalizeOrganizationName(raw)
  return result.ok ? null : result.failure.code === 'validation_failed' ? result.failure.errors : null
}

describe('normalizeOrganizationName', () => {
  test('trimmed, inner white space (no-break and ideographic spaces too) collapsed to one space', () => {
    expect(normalizeOrganizationName('  Acme   Retail ')).toEqual({ ok: true, value: 'Acme Retail' })
    expect(normalizeOrganizationName('Acme\u00a0\u3000Retail')).toEqual({ ok: true, value: 'Acme Retail' })
    expect(normalizeOrganizationName('Ünïcödé Gruppe')).toEqual({ ok: true, value: 'Ünïcödé Gruppe' })
  })

  test('required: empty or only spaces', () => {
    for (const raw of ['', '   ', '\u00a0'])
      expect(refusal(raw)).toEqual({ name: ['The organization name is required.'] })
  })

  test('required: a name of invisible characters alone (zero-width, fillers) shows nothing', () => {
    for (const raw of ['\u200b', ' \u200b\u2060 ', '\ufeff', '\u00ad', '\u3164', '\u2800\u200d'])
      expect(refusal(raw)).toEqual({ name: ['The organization name is required.'] })
    // Beside a visible character they stay (a joiner inside an emoji, a soft hyphen).
    expect(normalizeOrganizationName('Acme\u00adRetail').ok).toBe(true)
    expect(normalizeOrganizationName('\u{1f468}\u200d\u{1f4bb} Dev').ok).toBe(true)
  })

  test('at most 200 characters after trimming', () => {
    const longest = 'a'.repeat(MAX_ORGANIZATION_NAME)
    expect(normalizeOrganizationName(`  ${longest}  `)).toEqual({ ok: true, value: longest })
    expect(refusal(`${longest}b`)).toEqual({
      name: [`The organization name may be at most ${MAX_ORGANIZATION_NAME} characters.`],
    })
  })

  test('control characters are refused wherever they are, tab and newline included', () => {
    for (const raw of [
      '\u0000Acme',
      'Ac\tme',
      'Acme\n',
      'Ac\rme',
      'Acme\u001b[31m',
      'Acme\u007f',
      'Acme\u0085',
      'Acme\u009f',
    ])
      expect(refusal(raw)).toEqual({ name: ['The organization name must not contain control characters.'] })
  })
})

// Found by a hostile-input sweep: "Café" typed with a composed é (NFC) and with e + U+0301 (NFD)
// made two organizations that look alike, and a right-to-left override let a name display as
// another (CVE-2021-42574, "Trojan Source").
describe('Unicode', () => {
  test('names are stored in NFC, so the NFD spelling is the same name', () => {
    expect(normalizeOrganizationName('Cafe\u0301')).toEqual({ ok: true, value: 'Caf\u00e9' })
    expect(normalizeOrganizationName('Caf\u00e9')).toEqual({ ok: true, value: 'Caf\u00e9' })
    expect(normalizeOrganizationName('  A\u0308rger  GmbH ')).toEqual({ ok: true, value: '\u00c4rger GmbH' })
  })

  test('the length counts the NFC name', () => {
    const nfd = 'e\u0301'.repeat(MAX_ORGANIZATION_NAME)
    expect(normalizeOrganizationName(nfd)).toEqual({
      ok: true,
      value: '\u00e9'.repeat(MAX_ORGANIZATION_NAME),
    })
  })

  test('bidirectional embedding, override and isolate controls are refused', () => {
    for (const code of [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069])
      expect(refusal(`Acme${String.fromCodePoint(code)}moc.exe`), code.toString(16)).toEqual({
        name: [
          'The organization name must not contain bidirectional control characters (U+202A–U+202E, U+2066–U+2069).',
        ],
      })
    // Right-to-left text itself is a name like any other.
    expect(normalizeOrganizationName('שלום עולם')).toEqual({ ok: true, value: 'שלום עולם' })
  })
})
