import { describe, expect, test } from 'bun:test'
import {
  atLeast,
  checkRecipients,
  checkSettings,
  defaultNotificationSettings,
  isTimeZone,
  MAX_RECIPIENTS,
  maskUrl,
  type NotificationSettings,
  type NotificationSettingsStore,
} from '../../../domain/notifications/settings.ts'
import { saveNotificationSettings } from '../../../domain/notifications/use-cases.ts'
import { invalid, ok } from '../../../domain/shared/result.ts'

// The pure rules of notification settings (docs/notifications.md) and the save use case's merging.

describe('rules', () => {
  test('severity thresholds: at or above', () => {
    expect(atLeast('critical', 'high')).toBe(true)
    expect(atLeast('high', 'high')).toBe(true)
    expect(atLeast('medium', 'high')).toBe(false)
    expect(atLeast('info', 'info')).toBe(true)
  })

  test('time zones are the IANA names the runtime lists, and UTC', () => {
    for (const zone of ['UTC', 'Etc/UTC', 'Europe/Paris', 'America/Argentina/Buenos_Aires', 'Asia/Kolkata'])
      expect(isTimeZone(zone), zone).toBe(true)
    for (const zone of Intl.supportedValuesOf('timeZone')) expect(isTimeZone(zone), zone).toBe(true)
    for (const zone of ['', 'Mars/Olympus_Mons', 'Europe/Paris\n', 'x'.repeat(65)])
      expect(isTimeZone(zone), zone).toBe(false)
  })

  // Intl.DateTimeFormat takes offsets too (since ES2024): a hostile-input sweep got `+05:00` saved
  // as the digest's time zone. Links and other spellings Intl knows name a zone, and stay.
  test('offsets are refused; links and other spellings of a zone are taken', () => {
    for (const zone of ['+05:00', '-0800', '+05', 'Europe/Paris ', ' UTC'])
      expect(isTimeZone(zone), zone).toBe(false)
    for (const zone of ['US/Eastern', 'Asia/Calcutta', 'EST', 'utc', 'europe/paris'])
      expect(isTimeZone(zone), zone).toBe(true)
  })

  test('recipients: normalised, deduplicated, bounded, malformed refused on the field', () => {
    expect(checkRecipients('r', [' A@Example.com', 'a@example.com', 'b@example.org'])).toEqual(
      ok(['a@example.com', 'b@example.org']),
    )
    expect(checkRecipients('r', ['nope']).ok).toBe(false)
    // Found by a hostile-input sweep: the old `x@y.z` pattern took these, the first with its brackets.
    for (const address of [
      '<a@example.com>',
      'a..b@example.com',
      '.a@example.com',
      'a@-example.com',
      'a@example..com',
    ])
      expect(checkRecipients('r', ['ok@example.com', address]), address).toEqual(
        invalid('r', `Not an email address: ${address}.`),
      )
    const many = Array.from({ length: MAX_RECIPIENTS + 1 }, (_, i) => `u${i}@example.com`)
    const refused = checkRecipients('alert_email.recipients', many)
    expect(
      !refused.ok && refused.failure.code === 'validation_failed' && refused.failure.errors,
    ).toHaveProperty(['alert_email.recipients'])
  })

  test('checkSettings keeps good settings and names the bad field', () => {
    const good = defaultNotificationSettings()
    expect(checkSettings(good)).toEqual(ok(good))
    const bad = { ...good, digest: { ...good.digest, timeZone: 'Nowhere' } }
    const result = checkSettings(bad)
    expect(
      !result.ok && result.failure.code === 'validation_failed' && Object.keys(result.failure.errors),
    ).toEqual(['digest.time_zone'])
    const notBoolean = { ...good, alertEmail: { ...good.alertEmail, enabled: 'yes' as unknown as boolean } }
    const switchRefused = checkSettings(notBoolean)
    expect(
      !switchRefused.ok &&
        switchRefused.failure.code === 'validation_failed' &&
        Object.keys(switchRefused.failure.errors),
    ).toEqual(['alert_email.enabled'])
  })

  test('masking keeps the scheme, host and last four characters only', () => {
    expect(maskUrl('https://hooks.slack.com/services/T0/B0/abcdefWXYZ')).toBe('https://hooks.slack.com/…WXYZ')
    expect(maskUrl(null)).toBeNull()
    expect(maskUrl('not a url')).toBe('…')
  })
})

describe('saveNotificationSettings', () => {
  const memoryStore = () => {
    const saved = new Map<string, NotificationSettings>()
    const store: NotificationSettingsStore = {
      get: async (id) => saved.get(id) ?? defaultNotificationSettings(),
      put: async (id, settings) => void saved.set(id, settings),
    }
    return { store, saved }
  }
  const checkUrl = async (raw: string, field: string) =>
    raw.startsWith('https://') ? ok(raw) : invalid<string>(field, 'https only')

  test('sections left out are kept; a URL left out is kept, null turns off; new URLs are checked', async () => {
    const { store, saved } = memoryStore()
    const deps = { settings: store, checkUrl }
    await saveNotificationSettings(deps, {
      accountId: 'a',
      changes: { slack: { webhookUrl: 'https://hooks.example/1', minSeverity: 'high' } },
    })
    const kept = await saveNotificationSettings(deps, {
      accountId: 'a',
      changes: { slack: { minSeverity: 'low' }, teams: { webhookUrl: null, minSeverity: 'critical' } },
    })
    expect(kept.ok && kept.value.slack).toEqual({ webhookUrl: 'https://hooks.example/1', minSeverity: 'low' })
    expect(kept.ok && kept.value.alertEmail).toEqual(defaultNotificationSettings().alertEmail)
    const refused = await saveNotificationSettings(deps, {
      accountId: 'a',
      changes: { teams: { webhookUrl: 'http://x', minSeverity: 'high' } },
    })
    expect(
      !refused.ok && refused.failure.code === 'validation_failed' && refused.failure.errors,
    ).toHaveProperty(['teams.webhook_url'])
    expect(saved.get('a')!.teams.webhookUrl).toBeNull()
  })

  test('alert emails: `enabled` left out keeps the saved switch; given, it replaces it', async () => {
    const { store } = memoryStore()
    const deps = { settings: store, checkUrl }
    const save = (enabled?: boolean) =>
      saveNotificationSettings(deps, {
        accountId: 'a',
        changes: {
          alertEmail: { ...(enabled === undefined ? {} : { enabled }), minSeverity: 'low', recipients: [] },
        },
      })
    const off = await save(false)
    expect(off.ok && off.value.alertEmail.enabled).toBe(false)
    const kept = await save()
    expect(kept.ok && kept.value.alertEmail).toEqual({ enabled: false, minSeverity: 'low', recipients: [] })
    const on = await save(true)
    expect(on.ok && on.value.alertEmail.enabled).toBe(true)
  })
})
