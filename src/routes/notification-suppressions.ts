import { Elysia, t } from 'elysia'
import { type MailSuppressionList, SUPPRESSION_KINDS } from '../../domain/notifications/mail-ports.ts'
import { liftSuppression, listSuppressions } from '../../domain/notifications/suppressions.ts'
import { apiModels, authErrors, enumOf, PageMeta, PaginationQuery } from '../../plugins/api-models.ts'
import { type AuthDeps, authPlugin } from '../../plugins/auth.ts'
import { item, list, pageRequest } from '../../plugins/envelope.ts'
import { unwrap } from '../../plugins/failures.ts'
import { Line } from '../../plugins/input-schemas.ts'

// The account's mail suppressions (docs/notifications.md "Unsubscribe", docs/api.md): who is not
// mailed any more and why, and lifting a suppression so an address is mailed again.

const MailSuppressionModel = t.Object({
  recipient: t.String({ examples: ['postmaster@example.com'] }),
  kind: enumOf(
    SUPPRESSION_KINDS,
    'alerts or digest: unsubscribed from that kind; all: bounced (no kind is sent)',
  ),
  reason: enumOf(['unsubscribed', 'bounced']),
  detail: t.Nullable(t.String({ description: 'The mail server’s answer, for a bounce' })),
  at: t.String({ format: 'date-time' }),
})

const MODELS = {
  MailSuppressionList: t.Object({ data: t.Array(MailSuppressionModel), meta: PageMeta }),
  MailSuppressionLifted: t.Object({ data: t.Object({ lifted: t.Integer({ minimum: 1 }) }) }),
}

export interface SuppressionRouteDeps {
  suppressions: MailSuppressionList
  auth: AuthDeps
}

export function notificationSuppressionRoutes(deps: SuppressionRouteDeps) {
  return new Elysia({
    name: 'routes:notification-suppressions',
    prefix: '/notifications/suppressions',
    detail: { tags: ['Notifications'] },
  })
    .use(apiModels)
    .use(authPlugin(deps.auth))
    .model(MODELS)
    .get(
      '',
      async ({ principal, query }) => {
        const page = pageRequest(query)
        const rows = await listSuppressions(deps, { accountId: principal.accountId, page })
        return list(rows, page, (row) => ({ ...row, at: row.at.toISOString() }))
      },
      {
        auth: true,
        query: t.Object(PaginationQuery),
        response: { 200: 'MailSuppressionList', ...authErrors },
        detail: {
          summary: 'Addresses not mailed',
          description:
            'Addresses that unsubscribed from alert emails or the digest (through the link in a mail), or whose mail server refused them permanently (`all`: nothing is mailed to them), newest first.',
        },
      },
    )
    .delete(
      '/:address',
      async ({ principal, params, query }) => {
        const lifted = unwrap(
          await liftSuppression(deps, {
            accountId: principal.accountId,
            recipient: params.address,
            kind: query.kind ?? null,
          }),
        )
        return item(lifted)
      },
      {
        auth: true,
        params: t.Object({
          address: Line({ maxLength: 254, minLength: 1, examples: ['postmaster@example.com'] }),
        }),
        query: t.Object({
          // enumOf, not UnionEnum: Elysia fills an absent UnionEnum field with its first value.
          kind: t.Optional(enumOf(SUPPRESSION_KINDS, 'Only this suppression; every one when left out')),
        }),
        response: { 200: 'MailSuppressionLifted', ...authErrors, 404: 'Error' },
        detail: {
          summary: 'Mail an address again',
          description:
            'Lifts the address’s suppressions (of `kind`, or every one), so the next mail of that kind goes to it again. 404 when the address has none.',
        },
      },
    )
}
