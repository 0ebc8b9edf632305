import { describe, expect, test } from 'bun:test'
import { digestDue, digestPeriods } from '../../../domain/notifications/digest-schedule.ts'

// When a digest is due, in the account's time zone, and the days it covers (docs/notifications.md,
// "The digest").

describe('digestDue', () => {
  test('daily: the local date once 08:00 has passed there', () => {
    expect(digestDue(new Date('2026-11-24T06:59:00Z'), 'Europe/Paris', 'daily')).toBeNull() // 07:59
    expect(digestDue(new Date('2026-11-24T07:00:00Z'), 'Europe/Paris', 'daily')).toBe('2026-11-24')
    expect(digestDue(new Date('2026-11-24T22:30:00Z'), 'Europe/Paris', 'daily')).toBe('2026-11-24')
    // 23:30 UTC is already 08:30 the next day in Tokyo.
    expect(digestDue(new Date('2026-11-24T23:30:00Z'), 'Asia/Tokyo', 'daily')).toBe('2026-11-25')
  })

  test('weekly: Mondays only, in local time', () => {
    expect(digestDue(new Date('2026-11-23T08:05:00Z'), 'UTC', 'weekly')).toBe('2026-11-23')
    expect(digestDue(new Date('2026-11-24T08:05:00Z'), 'UTC', 'weekly')).toBeNull()
    // Monday 08:30 in New York is 13:30 UTC; at 08:30 UTC it is still 03:30 there.
    expect(digestDue(new Date('2026-11-23T08:30:00Z'), 'America/New_York', 'weekly')).toBeNull()
    expect(digestDue(new Date('2026-11-23T13:30:00Z'), 'America/New_York', 'weekly')).toBe('2026-11-23')
    // A zone 45 minutes off the hour: 02:20 UTC is 08:05 in Kathmandu.
    expect(digestDue(new Date('2026-11-23T02:20:00Z'), 'Asia/Kathmandu', 'weekly')).toBe('2026-11-23')
  })
})

describe('digestPeriods', () => {
  test('daily: yesterday against the day before', () => {
    expect(digestPeriods('2026-03-01', 'daily')).toEqual({
      current: { from: '2026-02-28', to: '2026-02-28' },
      previous: { from: '2026-02-27', to: '2026-02-27' },
    })
  })
  test('weekly: the seven days before against the seven before them', () => {
    expect(digestPeriods('2026-11-23', 'weekly')).toEqual({
      current: { from: '2026-11-16', to: '2026-11-22' },
      previous: { from: '2026-11-09', to: '2026-11-15' },
    })
  })
})
