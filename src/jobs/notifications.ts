import { attemptChatDelivery, type ChatDeliveryDeps } from '../../domain/notifications/chat-delivery.ts'
import { DELIVER_CHAT } from '../../infrastructure/queue/catalogue.ts'
import { handle, type JobHandler } from '../../infrastructure/queue/handlers.ts'

// Slack and Teams messages (docs/notifications.md, "Chat messages"): one job per attempt, enqueued by
// the webhook relay for alert events and by the previous attempt for a retry. A channel's failure is
// recorded on the delivery (domain/notifications/chat-delivery.ts); the handler throws only for our
// own trouble (database down), which pg-boss retries.

export function notificationJobs(deps: ChatDeliveryDeps): JobHandler[] {
  return [
    // Attempts wait on the network (up to 10 s each): a batch runs concurrently.
    handle(DELIVER_CHAT, { batchSize: 10, localConcurrency: 1, pollingIntervalSeconds: 1 }, async (jobs) => {
      const results = await Promise.allSettled(jobs.map((job) => attemptChatDelivery(deps, job.data)))
      const failed = results.find((r) => r.status === 'rejected')
      if (failed) throw failed.reason
    }),
  ]
}
