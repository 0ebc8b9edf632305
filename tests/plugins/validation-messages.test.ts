import { expect, test } from 'bun:test'
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
