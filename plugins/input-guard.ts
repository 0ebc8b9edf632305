import { Elysia } from 'elysia'
import './formats.ts'
import { assertWellFormed } from './body-limit.ts'
import {
  findLooseNumbers,
  findUndecodable,
  findUndecodablePath,
  findUnsafeJson,
  findUnsafePairs,
  rawPathParams,
  unsafeInputFailure,
} from './input-rules.ts'

const isForm = (request: Request) =>
  /^application\/x-www-form-urlencoded\b/i.test(request.headers.get('content-type') ?? '')

/**
 * Global: runs after authentication and schema validation, before every handler. JSON bodies were
 * already checked while parsing (plugins/body-limit.ts); here the query, path and form bodies are.
 */
export const inputGuard = new Elysia({ name: 'input-guard' })
  .onBeforeHandle({ as: 'global' }, ({ request, params, body, query, route }) => {
    // The raw query, not Elysia's parsed one: a `__proto__` key would not survive parsing.
    const url = new URL(request.url)
    const search = url.searchParams
    const form = typeof body === 'string' && isForm(request)
    const pathParams = rawPathParams(route, url.pathname)
    const problem =
      findUndecodable(url.search.slice(1), 'query') ??
      // The API names the field; a dashboard page answers an undecodable address as it answers any
      // unknown one (its 404 page, or the invalid-link page of a sign-in or invitation link).
      (url.pathname.startsWith('/api/') ? findUndecodablePath(pathParams) : null) ??
      (form ? findUndecodable(body, 'body') : null) ??
      findUnsafePairs(search, { repeatable: false }) ??
      findUnsafeJson(params ?? null, 'path') ??
      // Numbers as written, against what validation coerced them to.
      findLooseNumbers(search, query as Record<string, unknown> | undefined) ??
      findLooseNumbers(pathParams, params as Record<string, unknown> | undefined) ??
      // Form bodies keep repeated keys: several checkboxes share a name.
      (form ? findUnsafePairs(new URLSearchParams(body), { repeatable: true }) : null)
    if (problem) throw unsafeInputFailure(problem)
    // Routes without the auth macros have not looked at the parse result yet.
    assertWellFormed(body)
  })
  .as('global')
