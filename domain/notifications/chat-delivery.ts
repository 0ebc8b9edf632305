import type { Logger } from '../shared/logger.ts'
import { invalid, ok, type Result } from '../shared/result.ts'
import {
  type AttemptOutcome,
  type AttemptVerdict,
  afterAttempt,
  classifyAttempt,
  type DeliveryState,
  type DeliveryStep,
} from '../webhooks/schedule.ts'
import {
  alertNotice,
  type ChatEvent,
  type ChatNotice,
  slackMessage,
  teamsMessage,
  testNotice,
} from './chat-messages.ts'
import type { ChatChannel, NotificationSettingsStore } from './settings.ts'

// Chat deliveries (docs/notifications.md, "Chat messages"): one message per alert event and channel,
// made by a job per attempt and retried like webhooks (domain/webhooks/schedule.ts: the same
// verdicts and the same 0 s, 5 s, 30 s, 5 min, 1 h schedule), and the test message, sent at once.
// A channel's failure is recorded on its delivery, never thrown: only our own trouble throws.

export interface ChatAttempt {
  deliveryId: string
  attempt: number
}

export interface ChatDeliveryContext {
  id: string
  accountId: string
  channel: ChatChannel
  event: ChatEvent
  data: Record<string, unknown>
  status: DeliveryState
  attempts: number
  /** The chain's anchor: the retry offsets count from here (the first attempt follows at once). */
  createdAt: Date
}

export interface ChatAttemptRecord {
  deliveryId: string
  attempt: number
  verdict: AttemptVerdict
  /** What went wrong (null when delivered): `HTTP 500`, `timeout: …`. */
  error: string | null
  step: DeliveryStep
  now: Date
}

/** The chain's bookkeeping (infrastructure/repositories/pg-chat-deliveries.ts). */
export interface ChatDeliveryLedger {
  context(deliveryId: string): Promise<ChatDeliveryContext | null>
  /** The new state, and the next attempt's job when the chain goes on; false when the job was stale. */
  recordAttempt(record: ChatAttemptRecord): Promise<boolean>
}

/** POSTs one JSON body through the guarded client (infrastructure/http/chat-sender.ts). */
export type PostChat = (url: string, body: unknown) => Promise<{ outcome: AttemptOutcome; latencyMs: number }>

export interface LastChatDelivery {
  event: ChatEvent
  status: DeliveryState
  attempts: number
  error: string | null
  at: Date
}

/** The deliveries the settings page and GET /notifications show, and the test messages' log. */
export interface ChatDeliveryLog {
  /** The newest delivery of each channel of the account. */
  lastDeliveries(accountId: string): Promise<Partial<Record<ChatChannel, LastChatDelivery>>>
  recordTest(input: {
    accountId: string
    channel: ChatChannel
    status: 'delivered' | 'failed'
    error: string | null
    now: Date
  }): Promise<void>
}

export function describeOutcome(outcome: AttemptOutcome): string {
  switch (outcome.kind) {
    case 'response':
      return `HTTP ${outcome.status}`
    case 'timeout':
      return 'timeout: no answer within 10 s'
    case 'connection_error':
      return `connection error: ${outcome.message}`
    case 'blocked':
      return `blocked: ${outcome.reason}`
  }
}

/** The channel's body for a notice. */
export const chatBody = (channel: ChatChannel, notice: ChatNotice): unknown =>
  channel === 'slack' ? slackMessage(notice) : teamsMessage(notice)

export interface ChatDeliveryDeps {
  ledger: ChatDeliveryLedger
  settings: NotificationSettingsStore
  post: PostChat
  /** PUBLIC_URL: the alert links point at the dashboard. */
  dashboardUrl: string
  logger: Logger
  now: () => Date
}

/** One attempt of one chat delivery; a stale job (recorded, ended, or account gone) does nothing. */
export async function attemptChatDelivery(deps: ChatDeliveryDeps, job: ChatAttempt): Promise<void> {
  const context = await deps.ledger.context(job.deliveryId)
  if (context === null || context.status !== 'pending' || context.attempts !== job.attempt - 1) return
  const fields = {
    delivery_id: context.id,
    account_id: context.accountId,
    channel: context.channel,
    attempt: job.attempt,
  }
  // The URL now, not when the event happened: a channel turned off since gets nothing.
  const url = (await deps.settings.get(context.accountId))[context.channel].webhookUrl
  if (url === null || context.event === 'test') {
    const now = deps.now()
    const error = url === null ? 'not sent: the channel was turned off' : 'not sent: tests are sent at once'
    await deps.ledger.recordAttempt({ ...job, verdict: 'give_up', error, step: { state: 'failed' }, now })
    deps.logger.warn('chat message not sent', { ...fields, reason: error })
    return
  }
  const notice = alertNotice(context.event, context.data, deps.dashboardUrl)
  const sent = await deps.post(url, chatBody(context.channel, notice))
  const endedAt = deps.now()
  const verdict = classifyAttempt(sent.outcome)
  const step = afterAttempt({
    verdict,
    attempt: job.attempt,
    endedAt,
    ...(job.attempt > 1 ? { firstFailureAt: context.createdAt } : {}),
  })
  const error = verdict === 'delivered' ? null : describeOutcome(sent.outcome)
  if (!(await deps.ledger.recordAttempt({ ...job, verdict, error, step, now: endedAt }))) return
  const level = step.state === 'failed' ? 'warn' : 'info'
  deps.logger[level]('chat message attempt', {
    ...fields,
    outcome: describeOutcome(sent.outcome),
    latency_ms: sent.latencyMs,
    state: step.state,
    next_attempt_at: step.state === 'pending' ? step.nextAttemptAt.toISOString() : undefined,
  })
}

export interface ChatTestOutcome {
  channel: ChatChannel
  status: 'delivered' | 'failed'
  /** `HTTP 200`, `timeout: …`, `connection error: …`. */
  outcome: string
}

/** POST /notifications/test for a chat channel: one attempt now, recorded, its outcome answered. */
export async function sendChatTest(
  deps: Pick<ChatDeliveryDeps, 'settings' | 'post' | 'dashboardUrl' | 'now' | 'logger'> & {
    log: ChatDeliveryLog
  },
  input: { accountId: string; channel: ChatChannel },
): Promise<Result<ChatTestOutcome>> {
  const { channel } = input
  const url = (await deps.settings.get(input.accountId))[channel].webhookUrl
  if (url === null)
    return invalid(
      `${channel}.webhook_url`,
      `No ${channel === 'slack' ? 'Slack' : 'Teams'} webhook URL is saved.`,
    )
  const sent = await deps.post(url, chatBody(channel, testNotice(deps.dashboardUrl)))
  const delivered = classifyAttempt(sent.outcome) === 'delivered'
  const outcome = describeOutcome(sent.outcome)
  const status = delivered ? 'delivered' : 'failed'
  await deps.log.recordTest({
    accountId: input.accountId,
    channel,
    status,
    error: delivered ? null : outcome,
    now: deps.now(),
  })
  if (!delivered) deps.logger.warn('chat test failed', { account_id: input.accountId, channel, outcome })
  return ok({ channel, status, outcome })
}
