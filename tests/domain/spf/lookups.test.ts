import { expect, test } from 'bun:test'
import { isQueryableName } from '../../../domain/spf/lookups.ts'

// The reference: labels of 1-63 UTF-8 octets, at most 253 characters (what isQueryableName did by
// encoding every label before it counted octets in one pass).
const encoder = new TextEncoder()
const reference = (name: string) =>
  name !== '' &&
  name.length <= 253 &&
  name.split('.').every((label) => {
    const size = encoder.encode(label).length
    return size > 0 && size <= 63
  })

test('isQueryableName: label sizes in UTF-8 octets, empty labels and long names refused', () => {
  expect(isQueryableName('mail.example.com')).toBe(true)
  expect(isQueryableName(`${'a'.repeat(63)}.example.com`)).toBe(true)
  expect(isQueryableName(`${'a'.repeat(64)}.example.com`)).toBe(false)
  // 32 two-octet characters are 64 octets; 21 three-octet ones 63; 16 four-octet ones 64.
  expect(isQueryableName(`${'é'.repeat(32)}.example.com`)).toBe(false)
  expect(isQueryableName(`${'€'.repeat(21)}.example.com`)).toBe(true)
  expect(isQueryableName(`${'😀'.repeat(16)}.example.com`)).toBe(false)
  expect(isQueryableName(`${'😀'.repeat(15)}.example.com`)).toBe(true)
  for (const bad of ['', '.', 'a..b', 'example.com.', '.example.com', `${'a.'.repeat(127)}a`])
    expect(isQueryableName(bad)).toBe(false)
})

test('isQueryableName agrees with encoding every label, on random names', () => {
  const alphabet = ['a', 'b', '.', '.', '-', 'é', '€', '😀', '\ud800', '\udc00', '7']
  let seed = 7
  const next = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    return seed
  }
  for (let n = 0; n < 5000; n++) {
    let name = ''
    const length = next() % 140
    for (let i = 0; i < length; i++) name += alphabet[next() % alphabet.length]
    if (next() % 4 === 0) name = name.replaceAll('.', '')
    expect([name, isQueryableName(name)]).toEqual([name, reference(name)])
  }
})
