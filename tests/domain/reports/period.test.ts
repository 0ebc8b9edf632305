import { expect, test } from 'bun:test'
import {
  extendedBack,
  outsideMonths,
  periodOf,
  splitWeeks,
  wholeMonths,
} from '../../../domain/reports/period.ts'

const now = new Date('2026-11-25T12:00:00Z') // a Wednesday

test('days, from/to and their limits', () => {
  expect(periodOf({}, now)).toEqual({ ok: true, value: { from: '2026-10-27', to: '2026-11-25' } })
  expect(periodOf({ days: 1 }, now)).toEqual({ ok: true, value: { from: '2026-11-25', to: '2026-11-25' } })
  expect(periodOf({ from: '2026-09-01', to: '2026-11-29' }, now).ok).toBe(true)
  // from/to may span a year (366 days: a leap year), beyond the 90 of `days`.
  expect(periodOf({ from: '2025-01-01', to: '2025-12-31' }, now).ok).toBe(true)
  expect(periodOf({ from: '2024-01-01', to: '2024-12-31' }, now)).toEqual({
    ok: true,
    value: { from: '2024-01-01', to: '2024-12-31' },
  })
  // `to` defaults to today: last spring to now is within a year.
  expect(periodOf({ from: '2025-11-25' }, now)).toEqual({
    ok: true,
    value: { from: '2025-11-25', to: '2026-11-25' },
  })
  expect(periodOf({ from: '2024-01-01', to: '2025-01-01' }, now)).toEqual({
    ok: false,
    failure: {
      code: 'validation_failed',
      message: 'The period from 2024-01-01 to 2025-01-01 spans 367 days; at most 366.',
      errors: { to: ['The period from 2024-01-01 to 2025-01-01 spans 367 days; at most 366.'] },
    },
  } as never)
  for (const input of [
    { days: 0 },
    { days: 91 },
    { days: 366 },
    { from: '2025-11-24' },
    { from: '2026-01-01', to: '2027-01-02' },
    { from: '2026-02-30' },
    { to: '2026-01-01' },
    { days: 3, from: '2026-01-01' },
  ]) {
    expect(periodOf(input, now).ok).toBe(false)
  }
})

test('a period splits into whole ISO weeks and edge days that together cover it exactly once', () => {
  // Wednesday 2026-10-28 .. Wednesday 2026-11-25: weeks from Monday 11-02 to Monday 11-16.
  expect(splitWeeks({ from: '2026-10-28', to: '2026-11-25' })).toEqual({
    weeks: { first: '2026-11-02', last: '2026-11-16' },
    edges: [
      { from: '2026-10-28', to: '2026-11-01' },
      { from: '2026-11-23', to: '2026-11-25' },
    ],
  })
  // Exactly Monday to Sunday: one week, no edges.
  expect(splitWeeks({ from: '2026-11-02', to: '2026-11-08' })).toEqual({
    weeks: { first: '2026-11-02', last: '2026-11-02' },
    edges: [],
  })
  // Shorter than a whole week: all edge.
  expect(splitWeeks({ from: '2026-11-03', to: '2026-11-08' })).toEqual({
    weeks: null,
    edges: [{ from: '2026-11-03', to: '2026-11-08' }],
  })
  // Every day of a range is in exactly one part.
  for (let offset = 0; offset < 14; offset++) {
    const from = new Date(Date.UTC(2026, 0, 1 + offset)).toISOString().slice(0, 10)
    const to = new Date(Date.UTC(2026, 0, 1 + offset + 40)).toISOString().slice(0, 10)
    const split = splitWeeks({ from, to })
    const days = new Set<string>()
    const add = (a: string, b: string) => {
      for (let d = Date.parse(`${a}T00:00:00Z`); d <= Date.parse(`${b}T00:00:00Z`); d += 86_400_000) {
        const key = new Date(d).toISOString().slice(0, 10)
        expect(days.has(key)).toBe(false)
        days.add(key)
      }
    }
    if (split.weeks)
      add(
        split.weeks.first,
        new Date(Date.parse(`${split.weeks.last}T00:00:00Z`) + 6 * 86_400_000).toISOString().slice(0, 10),
      )
    for (const edge of split.edges) add(edge.from, edge.to)
    expect(days.size).toBe(41)
  }
})

test('whole months: only calendar months wholly inside the period', () => {
  expect(wholeMonths({ from: '2026-01-01', to: '2026-01-31' })).toEqual(['2026-01-01'])
  expect(wholeMonths({ from: '2026-01-02', to: '2026-03-31' })).toEqual(['2026-02-01', '2026-03-01'])
  expect(wholeMonths({ from: '2025-11-26', to: '2026-11-26' })).toEqual([
    '2025-12-01',
    '2026-01-01',
    '2026-02-01',
    '2026-03-01',
    '2026-04-01',
    '2026-05-01',
    '2026-06-01',
    '2026-07-01',
    '2026-08-01',
    '2026-09-01',
    '2026-10-01',
  ])
  expect(wholeMonths({ from: '2024-02-01', to: '2024-02-28' })).toEqual([]) // a leap year's February
  expect(wholeMonths({ from: '2024-02-01', to: '2024-02-29' })).toEqual(['2024-02-01'])
  expect(wholeMonths({ from: '2026-10-28', to: '2026-11-25' })).toEqual([])
})

test('outside months: the rest of the period, around and between the months read monthly', () => {
  const period = { from: '2026-01-15', to: '2026-05-10' }
  expect(outsideMonths(period, [])).toEqual([period])
  expect(outsideMonths(period, ['2026-02-01', '2026-04-01'])).toEqual([
    { from: '2026-01-15', to: '2026-01-31' },
    { from: '2026-03-01', to: '2026-03-31' },
    { from: '2026-05-01', to: '2026-05-10' },
  ])
  expect(outsideMonths({ from: '2026-02-01', to: '2026-03-31' }, ['2026-02-01', '2026-03-01'])).toEqual([])
  expect(outsideMonths({ from: '2026-02-01', to: '2026-03-31' }, ['2026-03-01'])).toEqual([
    { from: '2026-02-01', to: '2026-02-28' },
  ])
  // The reporters' margin: 31 days before the period, then the same cut.
  expect(outsideMonths(extendedBack({ from: '2026-03-01', to: '2026-03-31' }, 31), ['2026-03-01'])).toEqual([
    { from: '2026-01-29', to: '2026-02-28' },
  ])
})

// Found by a hostile-input sweep: the month loop compared ISO strings, and past 9999-12-31
// toISOString gives `+010000-01-01`, which sorts first; the loop ran to year 275760 (~5 s) and
// threw. Date.UTC also reads the years 0-99 as 1900-1999, and a margin before 0001-01-01 named
// year 0, which PostgreSQL refuses.
test('the ends of the calendar: years 1 and 9999', () => {
  expect(wholeMonths({ from: '9999-12-01', to: '9999-12-31' })).toEqual(['9999-12-01'])
  expect(wholeMonths({ from: '9999-12-30', to: '9999-12-31' })).toEqual([])
  expect(wholeMonths({ from: '9999-01-15', to: '9999-12-31' })).toHaveLength(11)
  expect(outsideMonths({ from: '9999-11-20', to: '9999-12-31' }, ['9999-12-01'])).toEqual([
    { from: '9999-11-20', to: '9999-11-30' },
  ])
  expect(wholeMonths({ from: '0001-01-01', to: '0001-01-31' })).toEqual(['0001-01-01'])
  expect(wholeMonths({ from: '0099-12-01', to: '0100-01-31' })).toEqual(['0099-12-01', '0100-01-01'])
  expect(outsideMonths({ from: '0050-01-10', to: '0050-03-05' }, ['0050-02-01'])).toEqual([
    { from: '0050-01-10', to: '0050-01-31' },
    { from: '0050-03-01', to: '0050-03-05' },
  ])
  expect(extendedBack({ from: '0001-01-01', to: '0001-01-31' }, 31)).toEqual({
    from: '0001-01-01',
    to: '0001-01-31',
  })
  expect(extendedBack({ from: '0001-02-10', to: '0001-03-01' }, 31)).toEqual({
    from: '0001-01-10',
    to: '0001-03-01',
  })
  const now = new Date('2026-11-27T12:00:00Z')
  expect(periodOf({ from: '0000-06-01', to: '0000-06-30' }, now).ok).toBe(false)
  expect(periodOf({ from: '0001-01-01', to: '0001-01-31' }, now).ok).toBe(true)
  expect(periodOf({ from: '9999-12-01', to: '9999-12-31' }, now).ok).toBe(true)
})
