import { describe, expect, test } from 'bun:test'
import { inScope } from '../../../domain/alerts/alert.ts'
import { changeAlerts, changeScope, dmarcWeakenings } from '../../../domain/alerts/rules/changes.ts'
import { type RecordSnapshot, recordSnapshot, type SnapshotRecord } from '../../../domain/alerts/snapshot.ts'
import { parseDmarcRecord } from '../../../domain/dmarc/record.ts'
import { RSA_1024_SPKI, RSA_2048_SPKI } from '../dkim/keys.ts'
import { check, REPORT_ADDRESS } from './posture-fixture.ts'

const DMARC = `v=DMARC1; p=reject; rua=mailto:${REPORT_ADDRESS}`
const SPF = 'v=spf1 include:_spf.example.net -all'

function snapshot(
  checkedAt: string,
  records: Record<string, Partial<SnapshotRecord> & { value: string | null }>,
): RecordSnapshot {
  const names: Record<string, string> = {
    dmarc: '_dmarc.example.com',
    spf: 'example.com',
    mta_sts: '_mta-sts.example.com',
  }
  const out: RecordSnapshot['records'] = {}
  for (const [subject, record] of Object.entries(records)) {
    const kind = subject.startsWith('dkim:') ? 'dkim' : (subject as SnapshotRecord['kind'])
    const name = names[subject] ?? `${subject.slice(5)}._domainkey.example.com`
    out[subject] = { kind, name, ...record }
  }
  return { checkedAt, records: out }
}
const before = (records: Parameters<typeof snapshot>[1]) => snapshot('2026-05-09T20:00:00.000Z', records)
const after = (records: Parameters<typeof snapshot>[1]) => snapshot('2026-05-10T02:00:00.000Z', records)
const run = (previous: RecordSnapshot | null, current: RecordSnapshot) =>
  changeAlerts({ domain: 'example.com', previous, current })
const brief = (alerts: ReturnType<typeof changeAlerts>) =>
  alerts.map((a) => `${a.type}:${a.subject}:${a.severity}`)

describe('recordSnapshot from a real check', () => {
  test('keeps the own DMARC record, SPF, found and configured-missing DKIM selectors, MTA-STS and TLS-RPT', async () => {
    const { findings } = await check({}, { configured: ['mailer'] })
    const snap = recordSnapshot(findings)
    expect(snap.checkedAt).toBe('2026-05-10T08:00:00.000Z')
    expect(snap.records).toEqual({
      dmarc: { kind: 'dmarc', name: '_dmarc.example.com', value: DMARC },
      spf: { kind: 'spf', name: 'example.com', value: SPF },
      'dkim:google': {
        kind: 'dkim',
        name: 'google._domainkey.example.com',
        value: `v=DKIM1; k=rsa; p=${RSA_2048_SPKI}`,
      },
      'dkim:mailer': { kind: 'dkim', name: 'mailer._domainkey.example.com', value: null },
      mta_sts: { kind: 'mta_sts', name: '_mta-sts.example.com', value: 'v=STSv1; id=20240101' },
      tls_rpt: {
        kind: 'tls_rpt',
        name: '_smtp._tls.example.com',
        value: `v=TLSRPTv1; rua=mailto:${REPORT_ADDRESS}`,
      },
      bimi: { kind: 'bimi', name: 'default._bimi.example.com', value: null },
    })
  })

  test('a record behind a DNS failure is left out, never recorded as absent', async () => {
    const { findings } = await check({
      '_dmarc.example.com': { status: 'timeout' },
      'example.com': { status: 'timeout' },
    })
    const snap = recordSnapshot(findings)
    expect(snap.records.dmarc).toBeUndefined()
    expect(snap.records.spf).toBeUndefined()
  })

  test('two checks of a domain whose SPF record was edited give one change', async () => {
    const first = recordSnapshot((await check()).findings)
    const second = recordSnapshot(
      (await check({ 'example.com': 'v=spf1 include:_spf.example.net ~all' })).findings,
    )
    expect(brief(run(first, second))).toEqual(['dns_record_changed:spf:medium'])
  })
})

describe('dns_record_changed / dns_record_removed', () => {
  test('first check: nothing to compare', () => {
    expect(run(null, after({ spf: { value: SPF } }))).toEqual([])
  })

  test('an unchanged snapshot raises nothing', () => {
    const records = { dmarc: { value: DMARC }, spf: { value: SPF } }
    expect(run(before(records), after(records))).toEqual([])
  })

  test('a modified SPF record: dns_record_changed with both values and when', () => {
    const [alert, ...rest] = run(before({ spf: { value: SPF } }), after({ spf: { value: 'v=spf1 +all' } }))
    expect(rest).toEqual([])
    expect(alert).toEqual({
      type: 'dns_record_changed',
      subject: 'spf',
      severity: 'medium',
      title: 'The SPF record of example.com was changed',
      details: {
        evidence: {
          name: 'example.com',
          previous: SPF,
          current: 'v=spf1 +all',
          previousCheckAt: '2026-05-09T20:00:00.000Z',
          detectedAt: '2026-05-10T02:00:00.000Z',
          change: 'modified',
        },
        remedy: expect.stringContaining('restore the previous record'),
      },
    })
  })

  test('a removed DMARC record is high; a rotated DKIM key low; a new record info', () => {
    const alerts = run(
      before({
        dmarc: { value: DMARC },
        'dkim:s1': { value: `v=DKIM1; p=${RSA_1024_SPKI}` },
        mta_sts: { value: null },
      }),
      after({
        dmarc: { value: null },
        'dkim:s1': { value: `v=DKIM1; p=${RSA_2048_SPKI}` },
        mta_sts: { value: 'v=STSv1; id=2' },
      }),
    )
    expect(brief(alerts)).toEqual([
      'dns_record_changed:dkim:s1:low',
      'dns_record_removed:dmarc:high',
      'dns_record_changed:mta_sts:info',
    ])
    expect(alerts.map((a) => a.title)).toEqual([
      'The DKIM key s1 of example.com was changed',
      'The DMARC record of example.com was removed',
      'The MTA-STS record of example.com was published',
    ])
  })

  test('a record unknown in either check is not compared', () => {
    expect(run(before({}), after({ spf: { value: SPF } }))).toEqual([])
    expect(run(before({ spf: { value: SPF } }), after({}))).toEqual([])
  })

  test('scope: a removal alert clears only for a record present again', () => {
    const scope = changeScope({
      domain: 'example.com',
      previous: null,
      current: after({ spf: { value: SPF }, dmarc: { value: null } }),
    })
    expect(inScope(scope, 'dns_record_removed', 'spf')).toBe(true)
    expect(inScope(scope, 'dns_record_removed', 'dmarc')).toBe(false)
    expect(inScope(scope, 'dns_record_removed', 'dkim:s1')).toBe(false)
    expect(inScope(scope, 'dns_record_changed', 'spf')).toBe(false)
  })
})

describe('dmarc_weakened', () => {
  const weak = (from: string, to: string) =>
    run(before({ dmarc: { value: from } }), after({ dmarc: { value: to } })).filter(
      (a) => a.type === 'dmarc_weakened',
    )

  test('p=reject → p=none: high, with the tags in the title', () => {
    const [alert] = weak('v=DMARC1; p=reject', 'v=DMARC1; p=none')
    expect(alert).toMatchObject({ subject: '', severity: 'high' })
    expect(alert!.title).toBe(
      'The DMARC policy of example.com was weakened: p=reject → p=none, sp=reject → sp=none, np=reject → np=none',
    )
  })

  test('pct lowered or t=y added: medium; relaxed alignment: low', () => {
    expect(brief(weak('v=DMARC1; p=reject', 'v=DMARC1; p=reject; pct=50'))).toEqual([
      'dmarc_weakened::medium',
    ])
    expect(brief(weak('v=DMARC1; p=reject', 'v=DMARC1; p=reject; t=y'))).toEqual(['dmarc_weakened::medium'])
    expect(brief(weak('v=DMARC1; p=reject; aspf=s', 'v=DMARC1; p=reject'))).toEqual(['dmarc_weakened::low'])
  })

  test('near misses: a stronger or equally strong record, or an unusable new one', () => {
    expect(weak('v=DMARC1; p=none', 'v=DMARC1; p=quarantine')).toEqual([])
    expect(
      weak('v=DMARC1; p=reject; rua=mailto:a@example.com', 'v=DMARC1; p=reject; rua=mailto:b@example.com'),
    ).toEqual([])
    expect(weak('v=DMARC1; p=reject; pct=50', 'v=DMARC1; p=reject; pct=80')).toEqual([])
    expect(weak('v=DMARC1; p=reject', 'v=DMARC2; p=none')).toEqual([])
  })

  test('dmarcWeakenings lists each weakened tag', () => {
    const parse = (text: string) => {
      const parsed = parseDmarcRecord(text)
      if (!parsed.ok) throw new Error(text)
      return parsed.record
    }
    expect(
      dmarcWeakenings(
        parse('v=DMARC1; p=reject; sp=quarantine; adkim=s'),
        parse('v=DMARC1; p=reject; sp=none; t=y'),
      ),
    ).toEqual([
      { tag: 'sp', from: 'quarantine', to: 'none' },
      { tag: 'np', from: 'quarantine', to: 'none' },
      { tag: 't', from: 'n', to: 'y' },
      { tag: 'adkim', from: 's', to: 'r' },
    ])
  })
})
