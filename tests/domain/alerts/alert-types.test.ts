import { expect, test } from 'bun:test'
import { ALERT_TYPES, isAlertType, USER_RESOLVED_TYPES } from '../../../domain/alerts/alert.ts'
import { CHANGE_ALERT_TYPES } from '../../../domain/alerts/rules/changes.ts'
import { OPERATIONS_ALERT_TYPES } from '../../../domain/alerts/rules/operations.ts'
import { POSTURE_ALERT_TYPES } from '../../../domain/alerts/rules/posture.ts'
import { FAILURE_REPORT_ALERT_TYPES, REPORT_ALERT_TYPES } from '../../../domain/alerts/rules/reports.ts'

const families = [
  ...POSTURE_ALERT_TYPES,
  ...CHANGE_ALERT_TYPES,
  ...REPORT_ALERT_TYPES,
  ...FAILURE_REPORT_ALERT_TYPES,
  ...OPERATIONS_ALERT_TYPES,
]

test('every alert type belongs to exactly one rule family, and every type is stable snake_case', () => {
  expect([...families].sort()).toEqual([...ALERT_TYPES].sort())
  expect(new Set(families).size).toBe(families.length)
  for (const type of ALERT_TYPES) expect(type).toMatch(/^[a-z]+(_[a-z]+)*$/)
  expect(isAlertType('spf_missing')).toBe(true)
  expect(isAlertType('spf.no_record')).toBe(false)
  for (const type of USER_RESOLVED_TYPES) expect(ALERT_TYPES).toContain(type)
})

test('docs/alerts.md has a row for every alert type', async () => {
  const doc = await Bun.file('docs/alerts.md').text()
  const rows = [...doc.matchAll(/^\| `([a-z_]+)` +\|/gm)].map((m) => m[1])
  expect([...new Set(rows)].sort()).toEqual([...ALERT_TYPES].sort())
})
