import { openapi } from '@elysiajs/openapi'
import { Elysia } from 'elysia'
import { conformOpenApiDocument } from './openapi-document.ts'

// The reference UI is Swagger UI served from the app itself (swagger-ui-dist), so /swagger works
// offline and loads nothing from a CDN.
const SWAGGER_DIST = new URL('../node_modules/swagger-ui-dist/', import.meta.url).pathname
const ASSETS = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
} as const

/** OpenAPI 3.1 at /openapi/json with the interactive reference at /swagger (docs/api.md). */
export function openApiDocs(input: { version: string; publicUrl: string }) {
  // The plugin builds its document once (and again when routes are added); it is conformed to
  // OpenAPI 3.1 once per document it builds (plugins/openapi-document.ts).
  const conformed = new WeakMap<object, Record<string, unknown>>()
  return new Elysia({ name: 'openapi-docs' })
    .onAfterHandle(({ path, responseValue }) => {
      if (path !== '/openapi/json' || typeof responseValue !== 'object' || responseValue === null) return
      let document = conformed.get(responseValue)
      if (document === undefined) {
        document = conformOpenApiDocument(responseValue as Record<string, unknown>)
        conformed.set(responseValue, document)
      }
      return document
    })
    .use(
      openapi({
        path: '/swagger',
        specPath: '/openapi/json',
        provider: 'swagger-ui',
        swagger: {
          cdn: '/swagger-assets/swagger-ui-bundle.js',
          theme: '/swagger-assets/swagger-ui.css',
          persistAuthorization: true,
        },
        documentation: {
          openapi: '3.1.0',
          info: {
            title: 'dmarcwatch API',
            version: input.version,
            description:
              'Email-authentication monitoring: DMARC, SPF and DKIM posture, reports, sources, alerts and webhooks. ' +
              'Every JSON endpoint lives under /api/v1. Authenticate with `Authorization: Bearer dw_...` ' +
              '(create a token with `bun run cli token create`). Errors are `{"error", "message"}`; validation errors ' +
              'are `{"message", "errors": {field: [...]}}`; every response carries X-Request-Id and the ' +
              'X-RateLimit-Limit / -Remaining / -Reset headers (Reset in Unix epoch seconds).',
          },
          servers: [{ url: input.publicUrl }],
          components: {
            securitySchemes: {
              bearerAuth: { type: 'http', scheme: 'bearer', description: 'API token, prefix dw_' },
            },
          },
        },
        exclude: { paths: ['/swagger', '/openapi/json', /^\/swagger-assets\//] },
      }),
    )
    .get(
      '/swagger-assets/:file',
      ({ params, status, set }) => {
        const type = ASSETS[params.file as keyof typeof ASSETS]
        if (type === undefined) return status(404, { error: 'not_found', message: 'No such asset.' })
        set.headers['content-type'] = type
        set.headers['cache-control'] = 'public, max-age=86400'
        return Bun.file(`${SWAGGER_DIST}${params.file}`)
      },
      { detail: { hide: true } },
    )
}
