import { openapi } from '@elysiajs/openapi'

/** OpenAPI 3.1 at /openapi/json with the interactive reference at /swagger (contract §1). */
export function openApiDocs(input: { version: string; publicUrl: string }) {
  return openapi({
    path: '/swagger',
    specPath: '/openapi/json',
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
    exclude: { paths: ['/swagger', '/openapi/json'] },
  })
}
