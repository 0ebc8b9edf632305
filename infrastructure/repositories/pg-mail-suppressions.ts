import { and, desc, eq } from 'drizzle-orm'
import type { MailSuppression, MailSuppressionList } from '../../domain/notifications/mail-ports.ts'
import { offsetOf } from '../../domain/shared/pagination.ts'
import type { Db } from '../db/database.ts'
import { mailSuppressions } from '../db/schema/notification-mail.ts'

// The account's suppressions as its members see and lift them (domain/notifications/suppressions.ts);
// the mail path reads and writes them in pg-notification-mail-store.ts. Every statement is scoped
// by the account (tenant isolation lives here).

export function pgMailSuppressionList(db: Db): MailSuppressionList {
  return {
    async list(accountId, page) {
      const mine = eq(mailSuppressions.accountId, accountId)
      const rows = await db
        .select()
        .from(mailSuppressions)
        .where(mine)
        .orderBy(desc(mailSuppressions.at), mailSuppressions.recipient, mailSuppressions.kind)
        .limit(page.perPage)
        .offset(offsetOf(page))
      const total = await db.$count(mailSuppressions, mine)
      const items = rows.map(
        (row): MailSuppression => ({
          recipient: row.recipient,
          kind: row.kind as MailSuppression['kind'],
          reason: row.reason as MailSuppression['reason'],
          detail: row.detail,
          at: row.at,
        }),
      )
      return { items, total }
    },

    async lift(accountId, recipient, kind) {
      const lifted = await db
        .delete(mailSuppressions)
        .where(
          and(
            eq(mailSuppressions.accountId, accountId),
            eq(mailSuppressions.recipient, recipient),
            ...(kind === null ? [] : [eq(mailSuppressions.kind, kind)]),
          ),
        )
        .returning({ kind: mailSuppressions.kind })
      return lifted.length
    },
  }
}
