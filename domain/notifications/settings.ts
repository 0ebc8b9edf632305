import type { AlertSeverity } from '../alerts/alert.ts'
import { normalizeEmail } from '../shared/email-address.ts'
import { invalid, ok, type Result } from '../shared/result.ts'

// Who hears about what (issue #21, docs/notifications.md): alert emails, the digest, and the Slack and
// Teams channels of one account. Pure: the shape, its defaults and its rules. The chat URLs' SSRF
// check needs DNS, so it is a port the use case is handed (use-cases.ts).

/** The severity scale of alerts (domain/shared/finding.ts), lowest first. */
export const SEVERITIES = [
  'info',
  'low',
  'medium',
  'high',
  'critical',
] as const satisfies readonly AlertSeverity[]

export const DIGEST_FREQUENCIES = ['weekly', 'daily', 'off'] as const
export type DigestFrequency = (typeof DIGEST_FREQUENCIES)[number]

export const CHAT_CHANNELS = ['slack', 'teams'] as const
export type ChatChannel = (typeof CHAT_CHANNELS)[number]

/** At most this many addresses per list: the digest and alert mails are for a team, not a mailing list. */
export const MAX_RECIPIENTS = 20
/** IANA names are at most 32 characters today (e.g. America/Argentina/ComodRivadavia); room to spare. */
export const MAX_TIME_ZONE_LENGTH = 64

export interface ChatSettings {
  /** The incoming-webhook URL, in clear (sealed at rest); null: the channel is off. */
  webhookUrl: string | null
  minSeverity: AlertSeverity
}

export interface NotificationSettings {
  alertEmail: {
    /**
     * False: no alert email is sent, and the alert changes of that time are dropped, not mailed when
     * it is turned back on (docs/notifications.md "Alert emails"). Absent from a document saved
     * before the switch existed: true (the store lays the defaults under the document).
     */
    enabled: boolean
    minSeverity: AlertSeverity
    /** Empty: every member of the account (resolved when the mail is sent). */
    recipients: string[]
  }
  digest: {
    frequency: DigestFrequency
    /** Empty: every member of the account. */
    recipients: string[]
    /** IANA time zone the digest's 08:00 is in. */
    timeZone: string
  }
  slack: ChatSettings
  teams: ChatSettings
}

/** What an account has before it saves anything: alert mail on, from `medium` up to every member, a weekly digest, no chat. */
export function defaultNotificationSettings(): NotificationSettings {
  return {
    alertEmail: { enabled: true, minSeverity: 'medium', recipients: [] },
    digest: { frequency: 'weekly', recipients: [], timeZone: 'UTC' },
    slack: { webhookUrl: null, minSeverity: 'high' },
    teams: { webhookUrl: null, minSeverity: 'high' },
  }
}

export function isSeverity(value: string): value is AlertSeverity {
  return (SEVERITIES as readonly string[]).includes(value)
}

/** True when `severity` is at or above `threshold`. */
export function atLeast(severity: AlertSeverity, threshold: AlertSeverity): boolean {
  return SEVERITIES.indexOf(severity) >= SEVERITIES.indexOf(threshold)
}

/**
 * An IANA zone name the runtime knows (Intl is the source of truth for the digest's schedule):
 * canonical names, links (`US/Eastern`, `Asia/Calcutta`) and `UTC`. Not an offset (`+05:00`,
 * which Intl takes since ES2024): an offset does not follow daylight saving time, so it names no
 * place's clock (found by a hostile-input sweep). IANA names begin with a letter.
 */
export function isTimeZone(value: string): boolean {
  if (value.length > MAX_TIME_ZONE_LENGTH || !/^[A-Za-z]/.test(value)) return false
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value })
    return true
  } catch {
    return false
  }
}

/** A recipient list normalised (lower-cased, trimmed, deduplicated) or the field's error. */
export function checkRecipients(field: string, raw: readonly string[]): Result<string[]> {
  if (raw.length > MAX_RECIPIENTS) return invalid(field, `At most ${MAX_RECIPIENTS} recipients.`)
  const seen = new Set<string>()
  for (const entry of raw) {
    const email = normalizeEmail(entry)
    if (email === null) return invalid(field, `Not an email address: ${entry.slice(0, 80)}.`)
    seen.add(email)
  }
  return ok([...seen])
}

/** The parts of the settings that need no I/O to judge: recipients, time zone, enum values, switches. */
export function checkSettings(settings: NotificationSettings): Result<NotificationSettings> {
  if (typeof settings.alertEmail.enabled !== 'boolean')
    return invalid('alert_email.enabled', 'true or false.')
  const alertTo = checkRecipients('alert_email.recipients', settings.alertEmail.recipients)
  if (!alertTo.ok) return alertTo
  const digestTo = checkRecipients('digest.recipients', settings.digest.recipients)
  if (!digestTo.ok) return digestTo
  if (!isTimeZone(settings.digest.timeZone))
    return invalid(
      'digest.time_zone',
      'Not an IANA time zone name (e.g. Europe/Paris, America/New_York, UTC). An offset such as +05:00 is no time zone: it does not follow daylight saving time.',
    )
  if (!(DIGEST_FREQUENCIES as readonly string[]).includes(settings.digest.frequency))
    return invalid('digest.frequency', 'One of weekly, daily, off.')
  for (const [field, severity] of [
    ['alert_email.min_severity', settings.alertEmail.minSeverity],
    ['slack.min_severity', settings.slack.minSeverity],
    ['teams.min_severity', settings.teams.minSeverity],
  ] as const)
    if (!isSeverity(severity)) return invalid(field, `One of ${SEVERITIES.join(', ')}.`)
  return ok({
    ...settings,
    alertEmail: { ...settings.alertEmail, recipients: alertTo.value },
    digest: { ...settings.digest, recipients: digestTo.value },
  })
}

/**
 * A chat URL as the API and the page show it: scheme and host, and the last four characters, so a
 * user can tell which URL is saved without the token in it being readable (docs/notifications.md).
 */
export function maskUrl(url: string | null): string | null {
  if (url === null) return null
  let origin = ''
  try {
    origin = new URL(url).origin
  } catch {
    return '…'
  }
  return `${origin}/…${url.slice(-4)}`
}

/** Reads and writes one account's settings (infrastructure/repositories/pg-notification-settings-store.ts). */
export interface NotificationSettingsStore {
  /** The saved settings, or the defaults; chat URLs in clear (for sending only: the API masks them). */
  get(accountId: string): Promise<NotificationSettings>
  put(accountId: string, settings: NotificationSettings): Promise<void>
}
