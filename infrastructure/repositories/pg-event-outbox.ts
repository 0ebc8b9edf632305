import { and, asc, eq, gt } from 'drizzle-orm'
import type { DomainEvent } from '../../domain/events/event.ts'
import type { Db } from '../db/database.ts'
import { events } from '../db/schema/events.ts'

/** Call inside the transaction of the change the event reports (the outbox pattern). */
export async function appendEvent(tx: Db, accountId: string, event: DomainEvent): Promise<void> {
  await tx
    .insert(events)
    .values({ accountId, type: event.type, data: event.data, occurredAt: event.occurredAt })
}

export async function eventsOf(db: Db, accountId: string, after?: Date) {
  return db
    .select()
    .from(events)
    .where(
      and(eq(events.accountId, accountId), after === undefined ? undefined : gt(events.occurredAt, after)),
    )
    .orderBy(asc(events.occurredAt))
}
