import { Elysia, t } from 'elysia'

/** docs/api.md: /healthz says the process is up; /readyz that the database answers and is migrated. */
export function healthRoutes(deps: { ready: () => Promise<boolean> }) {
  return new Elysia({ name: 'routes:health', detail: { tags: ['Health'] } })
    .get('/healthz', () => ({ status: 'ok' as const }), {
      response: t.Object({ status: t.Literal('ok') }),
      detail: { summary: 'The process is up', security: [] },
    })
    .get(
      '/readyz',
      async ({ status }) => {
        const ready = await deps.ready().catch(() => false)
        return ready ? { status: 'ready' as const } : status(503, { status: 'not_ready' as const })
      },
      {
        response: {
          200: t.Object({ status: t.Literal('ready') }),
          503: t.Object({ status: t.Literal('not_ready') }),
        },
        detail: { summary: 'The database is reachable and every migration is applied', security: [] },
      },
    )
}
