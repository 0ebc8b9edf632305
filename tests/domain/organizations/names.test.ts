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
