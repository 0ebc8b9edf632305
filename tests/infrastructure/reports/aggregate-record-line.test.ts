import { expect, test } from 'bun:test'
import type { AggregateRecord } from '../../../domain/reports/aggregate-types.ts'
import type { SourceRollup } from '../../../domain/reports/report-rollup.ts'
import type { RecordOutcome } from '../../../domain/reports/store-aggregate.ts'
import {
  PENDING_COLUMNS,
  pendingFormat,
} from '../../../infrastructure/repositories/aggregate-pending-line.ts'
import {
  RECORD_COLUMNS,
  recordFormat,
  recordRow,
} from '../../../infrastructure/repositories/aggregate-record-line.ts'
import { copyLine } from '../../../infrastructure/repositories/sql-tx.ts'

// The COPY line built directly must be byte for byte the general form (the row's values through
// copyField, joined by tabs), whatever the values hold.

const report = { reportId: 9_007_199_254, accountId: 'acc\\ount\t1', domainId: 7, day: '2026-11-26' }

const hostile = [
  'tab\there',
  'new\nline',
  'carriage\rreturn',
  'back\\slash',
  '"quoted"',
  '\\N',
  'nul\u0000and\u0001\u001f\u007f',
  'unicode é ü 日本 🙂',
  'lone \ud800 surrogate \udfff',
  'line sep \u2028 para \u2029',
  '',
  ' ',
]

const plain: AggregateRecord = {
  sourceIp: '192.0.2.1',
  count: 3,
  disposition: 'none',
  dkimEvaluated: 'pass',
  spfEvaluated: 'fail',
  reasons: [],
  headerFrom: 'example.com',
  envelopeFrom: null,
  envelopeTo: null,
  dkim: [],
  spf: [{ domain: 'example.com', scope: null, result: 'pass' }],
}

const hostileRecord = (s: string, i: number): AggregateRecord => ({
  sourceIp: s,
  count: i * 1_000_003,
  disposition: s,
  dkimEvaluated: i % 2 ? s : null,
  spfEvaluated: i % 3 ? null : s,
  reasons: i % 2 ? [{ type: s, comment: i % 4 ? s : null }] : [],
  headerFrom: s,
  envelopeFrom: s,
  envelopeTo: i % 2 ? null : s,
  dkim: [
    { domain: s, selector: s, result: s, humanResult: null },
    { domain: 'd.example', selector: null, result: 'pass', humanResult: s },
  ],
  spf: i % 3 ? [] : [{ domain: s, scope: s, result: s }],
})

const outcomes: RecordOutcome[] = [
  { dkimAligned: true, spfAligned: false, dmarcPass: true },
  { dkimAligned: false, spfAligned: true, dmarcPass: false },
  { dkimAligned: false, spfAligned: false, dmarcPass: false },
]

test('the line equals the values through copyField for plain and hostile records', () => {
  const format = recordFormat(report)
  const items = [plain, ...hostile.map(hostileRecord)].map(
    (record, i) => [record, outcomes[i % outcomes.length]!] as const,
  )
  for (const item of items) {
    const values = format.values(item)
    expect(values).toHaveLength(RECORD_COLUMNS.length)
    expect(format.line!(item)).toBe(copyLine(values))
  }
})

test('the line is valid COPY text: one line, 18 fields, escapes and nulls where expected', () => {
  const format = recordFormat(report)
  const line = format.line!([hostileRecord('a\tb\nc\rd\\e', 0), outcomes[0]!])
  expect(line).not.toMatch(/[\n\r]/)
  const fields = line.split('\t')
  expect(fields).toHaveLength(RECORD_COLUMNS.length)
  expect(fields.slice(0, 4)).toEqual(['9007199254', 'acc\\\\ount\\t1', '7', '2026-11-26'])
  expect(fields[4]).toBe('a\\tb\\nc\\rd\\\\e')
  expect(fields[7]).toBe('\\N')
  // JSON already escapes the control characters; COPY doubles the backslashes it wrote.
  expect(fields[13]).toBe(
    '[{"domain":"a\\\\tb\\\\nc\\\\rd\\\\\\\\e","selector":"a\\\\tb\\\\nc\\\\rd\\\\\\\\e","result":"a\\\\tb\\\\nc\\\\rd\\\\\\\\e","humanResult":null},{"domain":"d.example","selector":null,"result":"pass","humanResult":"a\\\\tb\\\\nc\\\\rd\\\\\\\\e"}]',
  )
  expect(fields.slice(15)).toEqual(['t', 'f', 't'])
})

test('the values are the INSERT parameters in column order', () => {
  expect(recordRow(report, plain, outcomes[1]!)).toEqual([
    9_007_199_254,
    'acc\\ount\t1',
    7,
    '2026-11-26',
    '192.0.2.1',
    3,
    'none',
    'pass',
    'fail',
    '[]',
    'example.com',
    null,
    null,
    '[]',
    '[{"domain":"example.com","scope":null,"result":"pass"}]',
    false,
    true,
    false,
  ])
})

test('a pending rollup line is byte for byte its row through copyField, whatever the values hold', () => {
  const sources: SourceRollup[] = [
    ...hostile.map((value, i) => ({
      sourceIp: value,
      disposition: value,
      dkimAligned: i % 2 === 0,
      spfAligned: i % 3 === 0,
      messages: 2 ** 40 + i,
      spfPass: i,
      dkimPass: 0,
      forwarded: 1,
      dkimDomains: [value, 'esp.example'],
      spfDomains: i % 2 === 0 ? [] : [value],
    })),
    {
      sourceIp: '2001:db8::1',
      disposition: 'quarantine',
      dkimAligned: false,
      spfAligned: true,
      messages: 1,
      spfPass: 1,
      dkimPass: 0,
      forwarded: 0,
      dkimDomains: [],
      spfDomains: ['a.example', 'b.example'],
    },
  ]
  const format = pendingFormat(report.reportId, report.accountId)
  for (const source of sources) {
    expect(format.line!(source)).toBe(copyLine(format.values(source)))
    expect(format.values(source)).toHaveLength(PENDING_COLUMNS.length)
  }
})
