import { Type } from '@sinclair/typebox'
import { Elysia, t } from 'elysia'
import { MAX_PAGE } from './input-schemas.ts'

/**
 * An integer in a response model. Elysia's `t.Integer` is a transform (it coerces query-string
 * text), and one transform anywhere in a response schema makes Elysia run TypeBox's Encode over the
 * whole response: measured, about a sixth of an authenticated list request's CPU. Request schemas
 * (query, params) keep `t.Integer` for the coercion.
 */
export const ResponseInt = Type.Integer

/**
 * A JSON value, for the few figures whose shape depends on a kind (an alert's evidence, a
 * recommendation's evidence, the raw posture findings): typed as JSON, keys in snake_case by their
 * presenters. OpenAPI names it `JsonValue` (plugins/openapi-document.ts hoists the recursion).
 * Arrays nest at most two deep directly (an object starts again): recursion that passes through an
 * object is what TypeScript can type from the generated client (docs/api.md, "Generated client").
 */
export const JsonValue = Type.Recursive(
  (Self) => {
    const scalar = [Type.String(), Type.Number(), Type.Boolean(), Type.Null()]
    const object = Type.Record(Type.String(), Self)
    return Type.Union([
      ...scalar,
      object,
      Type.Array(Type.Union([...scalar, object, Type.Array(Type.Union([...scalar, object]))])),
    ])
  },
  { $id: 'JsonValue' },
)

/**
 * An object of JSON values. Written as an object whose additional properties are JSON values (not
 * `t.Record`): Elysia cannot build its response mirror for a record of a recursive type.
 */
export const JsonObject = (options: { description?: string; title?: string } = {}) =>
  t.Object({}, { ...options, additionalProperties: JsonValue })

// Shared response shapes (docs/api.md "Errors"), registered once so OpenAPI names them.

export const ErrorBody = t.Object(
  {
    error: t.String({ description: 'Stable snake_case code', examples: ['not_found'] }),
    message: t.String({ description: 'A human sentence' }),
  },
  { additionalProperties: true, description: 'Every error that is not a validation or rate-limit error' },
)

export const ValidationErrorBody = t.Object(
  {
    message: t.String({ examples: ['The domain_name field is required.'] }),
    errors: t.Record(t.String(), t.Array(t.String()), {
      examples: [{ domain_name: ['The domain_name field is required.'] }],
    }),
  },
  { description: 'Status 400: the invalid fields, by the request’s own field names' },
)

export const RateLimitErrorBody = t.Object(
  {
    error: t.String({ examples: ['Rate limit exceeded. Retry in 12 seconds.'] }),
    retry_after: t.Integer({ description: 'Seconds to wait; also in the Retry-After header' }),
  },
  { description: 'Status 429' },
)

export const PageMeta = t.Object({
  total: ResponseInt({ description: 'All matches, not just this page' }),
  page: ResponseInt(),
  per_page: ResponseInt(),
  last_page: ResponseInt(),
})

export const PaginationQuery = {
  page: t.Optional(
    t.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1, description: '1-based page number' }),
  ),
  per_page: t.Optional(
    t.Integer({ minimum: 1, maximum: 100, default: 25, description: 'Items per page (max 100)' }),
  ),
}

export const apiModels = new Elysia({ name: 'api-models' }).model({
  Error: ErrorBody,
  ValidationError: ValidationErrorBody,
  RateLimitError: RateLimitErrorBody,
})

/** The error responses every authenticated route can give. */
export const authErrors = {
  400: 'ValidationError',
  401: 'Error',
  429: 'RateLimitError',
} as const

/**
 * An enum without a default. Elysia's UnionEnum carries `default: <first value>`, which Elysia
 * writes into every body or query that lacks the field (a PATCH without `automation_level` would
 * reset it to the first value) and OpenAPI shows as if it were one.
 */
export function enumOf<const T extends readonly [string, ...string[]]>(values: T, description?: string) {
  const schema = t.UnionEnum(values, description === undefined ? {} : { description })
  delete (schema as { default?: unknown }).default
  return schema
}
