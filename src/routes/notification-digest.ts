import { Elysia } from 'elysia'
import { type DigestMailDeps, previewDigest } from '../../domain/notifications/digest-job.ts'
import { apiModels, authErrors } from '../../plugins/api-models.ts'
import { type AuthDeps, authPlugin } from '../../plugins/auth.ts'

// GET /notifications/digest/preview (issue #21, docs/notifications.md "Mail", docs/api.md): the
// account's next digest as HTML, with today's figures, so users see what they will get. The chart
// is a data: URL here (the mail carries it as an inline cid: attachment).

export interface DigestPreviewDeps {
  digest: Pick<DigestMailDeps, 'figures' | 'settings' | 'chart' | 'publicUrl' | 'now'>
  auth: AuthDeps
}

export function notificationDigestRoutes(deps: DigestPreviewDeps) {
  return new Elysia({
    name: 'routes:notification-digest',
    prefix: '/notifications',
    detail: { tags: ['Notifications'] },
  })
    .use(apiModels)
    .use(authPlugin(deps.auth))
    .get(
      '/digest/preview',
      async ({ principal, set }) => {
        set.headers['content-type'] = 'text/html; charset=utf-8'
        set.headers['cache-control'] = 'no-store'
        // Mail HTML, shown as a page if opened: no script, no outside fetch, only its inline styles
        // and its embedded chart (a data: URL), and never sniffed as anything else.
        set.headers['content-security-policy'] =
          "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
        set.headers['x-content-type-options'] = 'nosniff'
        return previewDigest(deps.digest, principal.accountId)
      },
      {
        auth: true,
        response: { ...authErrors },
        detail: {
          summary: 'Preview the next digest',
          description:
            'The next digest mail as `text/html`, with the figures of the period ending yesterday in the account’s time zone (the digest’s `frequency`; weekly when the digest is off). Its chart is embedded as a `data:` URL; the mail carries the same PNG as an inline attachment.',
          responses: {
            200: {
              description: 'The digest’s HTML',
              content: { 'text/html': { schema: { type: 'string' } } },
            },
          },
        },
      },
    )
}
