import { Elysia, t } from 'elysia'
import type { AlertStore } from '../../domain/alerts/ports.ts'
import { getAlert, resolveAlert } from '../../domain/alerts/use-cases.ts'
import { apiModels, authErrors } from '../../plugins/api-models.ts'
import { type AuthDeps, authPlugin } from '../../plugins/auth.ts'
import { item, list, pageRequest } from '../../plugins/envelope.ts'
import { unwrap } from '../../plugins/failures.ts'
import { RowId } from '../../plugins/input-schemas.ts'
import { AlertListQuery, alertFilters, alertModels, presentAlert } from './alert-models.ts'

// Alerts API (issue #6, docs/api.md, docs/alerts.md): `{base_url}/alerts...` and, because the seed spells
// them `/v1/alerts`, the same three routes under `{base_url}/v1/alerts...`, answering identically
// and marked deprecated in OpenAPI. Alerts of another account are 404 `not_found`, as unknown ones.

export interface AlertRouteDeps {
  alerts: AlertStore
  auth: AuthDeps
  now: () => Date
}

const AlertParams = t.Object({ alert: RowId({ description: 'The alert_id' }) })

function alertGroup(deps: AlertRouteDeps, prefix: '/alerts' | '/v1/alerts') {
  const deprecated = prefix !== '/alerts'
  const detail = (summary: string, description: string) => ({
    summary: deprecated ? `${summary} (deprecated alias of /alerts)` : summary,
    description: deprecated
      ? `${description} Same as the route under /api/v1/alerts, kept because the API specification lists /v1/alerts.`
      : description,
    ...(deprecated ? { deprecated: true } : {}),
  })
  return new Elysia({ name: `routes:alerts:${prefix}`, prefix, detail: { tags: ['Alerts'] } })
    .use(apiModels)
    .use(authPlugin(deps.auth))
    .model(alertModels)
    .get(
      '',
      async ({ principal, query }) => {
        const filters = unwrap(alertFilters(query))
        const page = pageRequest(query)
        return list(await deps.alerts.list(principal.accountId, filters, page), page, presentAlert)
      },
      {
        auth: true,
        query: AlertListQuery,
        response: { 200: 'AlertList', ...authErrors },
        detail: detail(
          'List alerts, newest first',
          'Filters: `status` (open, resolved or all; default all), `severity`, `domain`, `type`, and `since` / `until` on the creation time. One open alert per domain, type and subject: a condition that persists updates its alert instead of opening another.',
        ),
      },
    )
    .get(
      '/:alert',
      async ({ principal, params }) =>
        item(
          presentAlert(
            unwrap(await getAlert(deps, { accountId: principal.accountId, number: params.alert })),
          ),
        ),
      {
        auth: true,
        params: AlertParams,
        response: { 200: 'AlertItem', ...authErrors, 404: 'Error' },
        detail: detail('Get an alert', 'An alert of another account, or none, is 404 `not_found`.'),
      },
    )
    .post(
      '/:alert/resolve',
      async ({ principal, params }) =>
        item(
          presentAlert(
            unwrap(await resolveAlert(deps, { accountId: principal.accountId, number: params.alert })),
          ),
        ),
      {
        auth: true,
        params: AlertParams,
        response: { 200: 'AlertItem', ...authErrors, 404: 'Error' },
        detail: detail(
          'Resolve an alert',
          'Sets `status: resolved`, `resolution: user` and sends `alert.resolved` (data `{alert_id, domain, severity, title, resolved_at, reason}`). An alert already resolved is returned unchanged and sends nothing. A resolved alert is never reopened: if its condition still holds at the next evaluation, a new alert is opened.',
        ),
      },
    )
}

export function alertRoutes(deps: AlertRouteDeps) {
  return new Elysia({ name: 'routes:alerts', detail: { tags: ['Alerts'] } })
    .use(alertGroup(deps, '/alerts'))
    .use(alertGroup(deps, '/v1/alerts'))
}
