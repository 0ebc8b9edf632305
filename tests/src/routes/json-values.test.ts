import { expect, test } from 'bun:test'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { JsonObject } from '../../../plugins/api-models.ts'
import { snakeCaseKeys } from '../../../src/routes/source-models.ts'

// Evidence and findings are sent as JSON objects of `JsonValue` (plugins/api-models.ts): what
// snakeCaseKeys makes of an in-memory value must pass that schema, as JSON.stringify would send it.

const check = TypeCompiler.Compile(JsonObject())

test('keys become snake_case at every depth; values become what JSON would send', () => {
  const at = new Date('2026-05-01T10:00:00Z')
  const value = snakeCaseKeys({
    failureRate: 0.5,
    previousCheckAt: null,
    detectedAt: at,
    windows: [{ failedMessages: 3, share: Number.NaN }, undefined],
    term: undefined,
    nested: { ipList: ['192.0.2.1'], deeper: [[1, 2]] },
  })
  expect(value).toEqual({
    failure_rate: 0.5,
    previous_check_at: null,
    detected_at: '2026-05-01T10:00:00.000Z',
    windows: [{ failed_messages: 3, share: null }, null],
    nested: { ip_list: ['192.0.2.1'], deeper: [[1, 2]] },
  })
  expect(value).toEqual(JSON.parse(JSON.stringify(value)))
  expect(check.Check(value)).toBe(true)
})

test('the JsonValue schema refuses what is not JSON', () => {
  expect(check.Check({ a: () => 1 })).toBe(false)
  expect(check.Check({ a: undefined })).toBe(false)
  expect(check.Check({ a: [1, { b: [null, 'x', true] }] })).toBe(true)
})
