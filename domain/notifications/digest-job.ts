import { encodeBase64 } from '@oslojs/encoding'
import { recipientsOf } from './alert-mail-job.ts'
import { buildDigest, type Digest, type DigestDeps } from './digest.ts'
import { renderDigestMail } from './digest-mail.ts'
import { type DigestFrequency, digestDue } from './digest-schedule.ts'
import type { AccountMembers, InlineImage, MailOutbox, RenderedMail } from './mail-ports.ts'
import type { NotificationSettingsStore } from './settings.ts'

// The digest's jobs and its preview (docs/notifications.md "Mail"): the hourly scheduler claims
// each due digest once (DigestRuns.claim writes the run and its job together); the digest job
// reads the figures, renders the mail with its chart and queues one mail per recipient.

export interface DigestRuns {
  /** Accounts that have at least one domain (a digest of nothing is not sent). */
  accountsWithDomains(): Promise<string[]>
  /** Records the account's digest of `localDate` and enqueues its job; false when it was claimed already. */
  claim(accountId: string, frequency: DigestFrequency, localDate: string, now: Date): Promise<boolean>
}

/** The daily volume chart as PNG bytes (infrastructure/mail/png-chart.ts). */
export type DigestChart = (days: Digest['daily']) => Uint8Array

export const CHART_CID = 'daily-volume@dmarcwatch'

export async function scheduleDigests(deps: {
  runs: DigestRuns
  settings: Pick<NotificationSettingsStore, 'get'>
  now: () => Date
}): Promise<number> {
  const now = deps.now()
  let claimed = 0
  for (const accountId of await deps.runs.accountsWithDomains()) {
    const { digest } = await deps.settings.get(accountId)
    if (digest.frequency === 'off') continue
    const localDate = digestDue(now, digest.timeZone, digest.frequency)
    if (localDate !== null && (await deps.runs.claim(accountId, digest.frequency, localDate, now))) claimed++
  }
  return claimed
}

export interface DigestMailDeps {
  figures: DigestDeps
  settings: Pick<NotificationSettingsStore, 'get'>
  members: AccountMembers
  outbox: MailOutbox
  chart: DigestChart
  publicUrl: string
  now: () => Date
}

async function rendered(
  deps: Omit<DigestMailDeps, 'outbox' | 'members' | 'settings'>,
  input: { accountId: string; frequency: DigestFrequency; localDate: string },
  inline: boolean,
): Promise<RenderedMail> {
  const digest = await buildDigest(deps.figures, input)
  const png = encodeBase64(deps.chart(digest.daily))
  const image: InlineImage = {
    cid: CHART_CID,
    filename: 'daily-volume.png',
    contentType: 'image/png',
    base64: png,
  }
  const mail = renderDigestMail(digest, {
    publicUrl: deps.publicUrl,
    chartSrc: inline ? `cid:${CHART_CID}` : `data:image/png;base64,${png}`,
  })
  return inline ? { ...mail, images: [image] } : mail
}

/** The digest job: one mail per recipient, unless the account turned its digest off meanwhile. */
export async function sendDigest(
  deps: DigestMailDeps,
  input: { accountId: string; frequency: DigestFrequency; localDate: string },
): Promise<number> {
  const { digest } = await deps.settings.get(input.accountId)
  if (digest.frequency === 'off') return 0
  const mail = await rendered(deps, input, true)
  const to = await recipientsOf(deps.members, input.accountId, digest.recipients)
  await deps.outbox.enqueue(
    to.map((recipient) => ({ ...mail, accountId: input.accountId, kind: 'digest', to: recipient })),
  )
  return to.length
}

/**
 * GET /notifications/digest/preview: the next digest as it would be sent with today's figures (a
 * weekly one when the digest is off), its chart as a data: URL so that a browser shows it.
 */
export async function previewDigest(
  deps: Pick<DigestMailDeps, 'figures' | 'settings' | 'chart' | 'publicUrl' | 'now'>,
  accountId: string,
): Promise<string> {
  const { digest } = await deps.settings.get(accountId)
  const frequency: DigestFrequency = digest.frequency === 'daily' ? 'daily' : 'weekly'
  const localDate = localToday(deps.now(), digest.timeZone)
  return (await rendered(deps, { accountId, frequency, localDate }, false)).html
}

function localToday(now: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(now)
}
