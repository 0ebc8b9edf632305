import { expect, test } from 'bun:test'
import { bearerToken, secretMatcher } from '../../plugins/bearer.ts'

// The one reading of the Authorization header and the one secret comparison (plugins/bearer.ts),
// used by the API's token authentication, the intake secret and the metrics token.

test('a bearer token is the one word after the scheme (RFC 6750 §2.1)', () => {
  expect(bearerToken('Bearer dw_abc')).toBe('dw_abc')
  expect(bearerToken('bearer\tdw_abc \t')).toBe('dw_abc')
  expect(bearerToken('BEARER   dw_abc')).toBe('dw_abc')
  for (const refused of [
    null,
    '',
    'Bearer',
    'Bearer ',
    'Basic dw_abc',
    'dw_abc',
    'Bearer a b',
    'Bearer\fa',
  ]) {
    expect(bearerToken(refused)).toBeNull()
  }
  expect(bearerToken('Bearer\u00a0dw_abc')).toBeNull()
})

test('a secret matches only itself, whole; no secret matches nothing', () => {
  const matches = secretMatcher('s3cret-value')
  expect(matches('s3cret-value')).toBe(true)
  for (const other of ['s3cret-valu', 's3cret-value!', 'S3CRET-VALUE', '', null])
    expect(matches(other)).toBe(false)
  const none = secretMatcher(null)
  for (const given of ['', 'null', 's3cret-value', null]) expect(none(given)).toBe(false)
})
