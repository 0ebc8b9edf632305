import { Elysia, NotFoundError } from 'elysia'
import { type AuthDeps, authPlugin } from '../../plugins/auth.ts'

/**
 * What answers under /api/ when no route does: an unknown path (404) or a path of another method
 * (405 with `Allow`, plugins/errors.ts). It exists so that these answers are counted and carry the
 * limit headers like every other API answer (docs/api.md, "Authentication and limits"): against
 * the token when one is sent (a bad one is 401), else against the client's address. Elysia's router
 * tries every route of the request's method before a wildcard `all`, so this shadows none. It is
 * left out of the OpenAPI document and of the 405's route table (src/compose.ts).
 */
export const API_FALLBACK_PATH = '/api/*'

export function apiFallbackRoutes(deps: { auth: AuthDeps }) {
  return new Elysia({ name: 'routes:api-fallback' }).use(authPlugin(deps.auth)).all(
    API_FALLBACK_PATH,
    () => {
      throw new NotFoundError()
    },
    { anyCaller: true, parse: 'none', detail: { hide: true } },
  )
}
