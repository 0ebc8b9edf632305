import { describe, expect, test } from 'bun:test'
import { SINGLE_LINE } from '../../plugins/input-schemas.ts'
import { describeError, validationBody } from '../../plugins/validation-messages.ts'

test('messages are written from the schema, not TypeBox internals', () => {
  const enumSchema = { anyOf: [{ const: 'a' }, { const: 'b' }] }
  expect(describeError({ path: '/x', schema: enumSchema, value: 'z' }, 'x')).toBe(
    'The x field must be one of: a, b.',
  )
  expect(
    describeError({ path: '/x', schema: { type: 'integer', minimum: 1, maximum: 100 }, value: 500 }, 'x'),
  ).toBe('The x field must be a whole number from 1 to 100.')
  expect(describeError({ path: '/x', schema: { type: 'string', minLength: 1 }, value: '' }, 'x')).toBe(
    'The x field must not be empty.',
  )
  expect(describeError({ path: '/x', schema: { type: 'string' }, value: 3 }, 'x')).toBe(
    'The x field must be a string.',
  )
  expect(describeError({ path: '/x', schema: { type: 'string' }, value: undefined }, 'x')).toBe(
    'The x field is required.',
  )
  expect(
    describeError(
      { path: '/x', schema: { anyOf: [{ type: 'null' }, { type: 'integer' }] }, value: 'q' },
      'x',
    ),
  ).toBe('The x field must be a whole number.')
})

test('errors are grouped by field, nested paths dotted, root errors named by request part', () => {
  const body = validationBody(
    [
      { path: '/a', schema: { type: 'string' }, value: 1 },
      { path: '/a', schema: { type: 'string' }, value: 1 },
      { path: '/b/0/c', schema: { type: 'boolean' }, value: 'x' },
      { path: '', schema: { type: 'object' }, value: 'text' },
    ],
    'body',
    'text',
  )
  expect(body.errors).toEqual({
    a: ['The a field must be a string.'],
    'b.0.c': ['The b.0.c field must be true or false.'],
    body: ['The body field must be a JSON object.'],
  })
  expect(body.message).toBe('The a field must be a string. (and 2 more errors)')
})

test('a coerced query value reported at the root is found by its value', () => {
  const body = validationBody(
    [{ path: '', schema: { type: 'integer', maximum: 100 }, value: 500 }],
    'query',
    {
      page: '1',
      per_page: '500',
    },
  )
  expect(Object.keys(body.errors)).toEqual(['per_page'])
})

test('fields named like Object.prototype members stay fields (issue #16: this threw)', () => {
  const errors = ['__proto__', 'constructor', 'toString'].map((name) => ({
    path: `/${name}`,
    schema: { type: 'integer', minimum: 1, maximum: 100 },
    value: 500,
  }))
  const body = validationBody(errors, 'query')
  expect(Object.keys(body.errors)).toEqual(['__proto__', 'constructor', 'toString'])
  expect(
    Object.getOwnPropertyDescriptor(JSON.parse(JSON.stringify(body)).errors, '__proto__')?.value,
  ).toEqual(['The __proto__ field must be a whole number from 1 to 100.'])
  // Found by value in the query, the way Elysia reports a coerced number out of range.
  const query = Object.fromEntries(new URLSearchParams('__proto__=500&per_page=500'))
  const byValue = validationBody(
    [{ path: '', schema: { type: 'integer', maximum: 100 }, value: 500 }],
    'query',
    query,
  )
  expect(Object.keys(byValue.errors)).toEqual(['__proto__'])
})

test('a coerced number is found by the text it came from', () => {
  const schema = { type: 'integer', minimum: 1, maximum: 1_000_000 }
  const query = { per_page: '10', page: '99999999999999999999' }
  expect(Object.keys(validationBody([{ path: '', schema, value: 1e20 }], 'query', query).errors)).toEqual([
    'page',
  ])
  const body = { version: '1e308' }
  expect(Object.keys(validationBody([{ path: '', schema, value: 1e308 }], 'query', {}, body).errors)).toEqual(
    ['version'],
  )
})

// Found by a hostile-input sweep: 21 `dkim_selectors` answered "must be a list", which the caller
// had sent. Each keyword a request schema uses has a message that says what is wrong.
describe('each schema keyword has its own message', () => {
  const message = (schema: Record<string, unknown>, value: unknown) =>
    describeError({ path: '/x', schema, value }, 'x')

  test('lists: at most, at least, unique items; not a list at all', () => {
    const list = { type: 'array', minItems: 1, maxItems: 20 }
    expect(message(list, Array.from({ length: 21 }, String))).toBe('The x field may have at most 20 items.')
    expect(message({ type: 'array', maxItems: 1 }, ['a', 'b'])).toBe('The x field may have at most 1 item.')
    expect(message(list, [])).toBe('The x field must not be empty.')
    expect(message({ type: 'array', minItems: 2 }, ['a'])).toBe('The x field must have at least 2 items.')
    expect(message({ type: 'array', uniqueItems: true }, ['a', 'a'])).toBe(
      'The x field must not list the same item twice.',
    )
    expect(message(list, 'a')).toBe('The x field must be a list.')
    expect(message(list, { 0: 'a' })).toBe('The x field must be a list.')
    // A nullable list (`t.Nullable(t.Array(...))`) is judged by its list alternative.
    expect(message({ anyOf: [{ type: 'null' }, { ...list }] }, Array.from({ length: 21 }, String))).toBe(
      'The x field may have at most 20 items.',
    )
  })

  test('text: lengths, control and bidirectional characters, formats, a fixed value', () => {
    const line = { type: 'string', minLength: 1, maxLength: 5, pattern: SINGLE_LINE }
    expect(message(line, '')).toBe('The x field must not be empty.')
    expect(message({ ...line, minLength: 3 }, 'ab')).toBe('The x field must have at least 3 characters.')
    expect(message(line, 'abcdef')).toBe('The x field may have at most 5 characters.')
    expect(message(line, 'a\nb')).toBe('The x field must not contain control characters.')
    expect(message(line, 'a\u202eb')).toBe(
      'The x field must not contain bidirectional control characters (U+202A–U+202E, U+2066–U+2069).',
    )
    expect(message(line, 'a\u2068b')).toContain('bidirectional control characters')
    expect(message({ type: 'string', format: 'date' }, '2026-13-01')).toBe(
      'The x field must be an ISO 8601 date.',
    )
    expect(message({ type: 'string', format: 'date-time' }, 'soon')).toBe(
      'The x field must be an ISO 8601 timestamp.',
    )
    expect(message({ type: 'string', format: 'ipv4' }, '300.1.2.3')).toBe(
      'The x field must be an IPv4 address.',
    )
    expect(message({ type: 'string', format: 'ipv6' }, 'x')).toBe('The x field must be an IPv6 address.')
    expect(message({ type: 'string', format: 'uuid' }, 'x')).toBe('The x field must be a UUID.')
    expect(message({ type: 'string', pattern: '^[a-z]+$' }, 'A')).toBe('The x field has an invalid format.')
    expect(message({ const: 'accepted' }, 'x')).toBe('The x field must be accepted.')
  })

  test('numbers: ranges, whole numbers, and the numeric text Elysia lists beside an integer', () => {
    expect(message({ type: 'integer', minimum: 1, maximum: 100 }, 0)).toBe(
      'The x field must be a whole number from 1 to 100.',
    )
    expect(message({ type: 'integer', minimum: 1 }, -1)).toBe(
      'The x field must be a whole number of at least 1.',
    )
    expect(message({ type: 'number', maximum: 5 }, 6)).toBe('The x field must be a number of at most 5.')
    const elysiaInteger = {
      minimum: 1,
      maximum: 2_147_483_647,
      anyOf: [
        { type: 'string', format: 'integer', default: 0 },
        { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
      ],
    }
    for (const value of ['0x1', ' 1 ', '1.0', 1.5])
      expect(message(elysiaInteger, value), String(value)).toBe(
        'The x field must be a whole number from 1 to 2147483647.',
      )
  })

  test('one of a list of values', () => {
    expect(message({ type: 'string', enum: ['a', 'b'] }, 'c')).toBe('The x field must be one of: a, b.')
  })
})
