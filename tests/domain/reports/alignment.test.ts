import { describe, expect, test } from 'bun:test'
import { parseAggregateReport } from '../../../domain/reports/aggregate-parser.ts'
import type { AggregateRecord, PolicyPublished } from '../../../domain/reports/aggregate-types.ts'
import {
  alignmentMode,
  alignRecord,
  domainsAlign,
  normalizeDisposition,
  normalizeResult,
  publicSuffixOrganizationalDomain,
} from '../../../domain/reports/alignment.ts'
import { collect, fixtureBytes, xmlFixtures } from './aggregate-support.ts'

const deps = { organizationalDomain: publicSuffixOrganizationalDomain() }

describe('domainsAlign (RFC 7489 §3.1)', () => {
  test('relaxed: same Organizational Domain', () => {
    expect(domainsAlign(deps, 'mail.example.com', 'example.com', 'relaxed')).toBe(true)
    expect(domainsAlign(deps, 'a.b.example.co.uk', 'example.co.uk', 'relaxed')).toBe(true)
    expect(domainsAlign(deps, 'example.com', 'example.net', 'relaxed')).toBe(false)
    // Private suffixes count: two github.io sites are two organizations.
    expect(domainsAlign(deps, 'a.github.io', 'b.github.io', 'relaxed')).toBe(false)
    expect(domainsAlign(deps, 'www.a.github.io', 'a.github.io', 'relaxed')).toBe(true)
  })

  test('strict: the same name, ignoring case and a trailing dot', () => {
    expect(domainsAlign(deps, 'mail.example.com', 'example.com', 'strict')).toBe(false)
    expect(domainsAlign(deps, 'Example.COM.', ' example.com', 'strict')).toBe(true)
  })

  test('an empty name never aligns; a name without Organizational Domain only with itself', () => {
    expect(domainsAlign(deps, '', '', 'relaxed')).toBe(false)
    expect(domainsAlign(deps, '', 'example.com', 'relaxed')).toBe(false)
    expect(domainsAlign(deps, '192.0.2.1', '192.0.2.1', 'relaxed')).toBe(true)
    expect(domainsAlign(deps, '192.0.2.1', '192.0.2.2', 'relaxed')).toBe(false)
    expect(domainsAlign(deps, 'a.localhost', 'b.localhost', 'relaxed')).toBe(false)
  })

  test('the memoised lookup stays right when its cache fills and is emptied', () => {
    const organizationalDomain = publicSuffixOrganizationalDomain(2)
    const names = ['a.example.com', 'b.example.org', 'c.example.net', 'a.example.com', 'x.example.co.uk']
    expect(names.map(organizationalDomain)).toEqual([
      'example.com',
      'example.org',
      'example.net',
      'example.com',
      'example.co.uk',
    ])
  })

  test('adkim/aspf: s is strict, anything else relaxed', () => {
    expect([alignmentMode('s'), alignmentMode(' S '), alignmentMode('r'), alignmentMode(null)]).toEqual([
      'strict',
      'strict',
      'relaxed',
      'relaxed',
    ])
  })
})

const record = (over: Partial<AggregateRecord>): Pick<AggregateRecord, 'headerFrom' | 'dkim' | 'spf'> => ({
  headerFrom: 'example.com',
  dkim: [],
  spf: [],
  ...over,
})
const relaxed: Pick<PolicyPublished, 'adkim' | 'aspf'> = { adkim: null, aspf: null }
const dkim = (domain: string, result: string) => ({ domain, selector: null, result, humanResult: null })
const spf = (domain: string, result: string, scope: string | null = null) => ({ domain, scope, result })

describe('alignRecord', () => {
  test('DKIM: any passing signature from an aligned domain, among several', () => {
    const r = record({
      dkim: [dkim('amazonses.com', 'pass'), dkim('example.com', 'fail'), dkim('mail.example.com', 'PASS')],
    })
    expect(alignRecord(deps, { record: r, policy: relaxed })).toEqual({
      dkimAligned: true,
      spfAligned: false,
      dmarc: 'pass',
    })
    expect(alignRecord(deps, { record: r, policy: { adkim: 's', aspf: null } }).dkimAligned).toBe(false)
  })

  test('DKIM: an aligned signature that failed, or a passing one from elsewhere, does not align', () => {
    const r = record({ dkim: [dkim('example.com', 'fail'), dkim('sendgrid.net', 'pass')] })
    expect(alignRecord(deps, { record: r, policy: relaxed })).toEqual({
      dkimAligned: false,
      spfAligned: false,
      dmarc: 'fail',
    })
  })

  test('SPF: the MAIL FROM result only (scope mfrom or absent), not HELO', () => {
    const policy = relaxed
    expect(
      alignRecord(deps, { record: record({ spf: [spf('bounce.example.com', 'pass')] }), policy }).spfAligned,
    ).toBe(true)
    expect(
      alignRecord(deps, { record: record({ spf: [spf('example.com', 'pass', 'MFROM')] }), policy })
        .spfAligned,
    ).toBe(true)
    expect(
      alignRecord(deps, { record: record({ spf: [spf('example.com', 'pass', 'helo')] }), policy }).spfAligned,
    ).toBe(false)
    expect(
      alignRecord(deps, { record: record({ spf: [spf('example.com', 'softfail')] }), policy }).spfAligned,
    ).toBe(false)
    expect(alignRecord(deps, { record: record({ spf: [spf('', 'pass')] }), policy }).spfAligned).toBe(false)
  })

  test('SPF strict mode needs the exact From domain', () => {
    const r = record({ spf: [spf('bounce.example.com', 'pass')] })
    expect(alignRecord(deps, { record: r, policy: { adkim: null, aspf: 's' } })).toEqual({
      dkimAligned: false,
      spfAligned: false,
      dmarc: 'fail',
    })
  })

  test('agrees with what reporters computed (policy_evaluated) on the samples', async () => {
    // Known disagreements, both the reporter's: ikea's DKIM pass for example.de is reported as a
    // DKIM failure, and stalwart 005 counts an SPF pass for the HELO identity.
    const expectedDisagreements = [
      'ikea.com!example.de!1538690400!1538776800.xml 234.234.234.234',
      '005.xml 192.0.2.1',
    ]
    const disagreements: string[] = []
    let compared = 0
    for (const path of xmlFixtures()) {
      const parsed = await collect(parseAggregateReport([await fixtureBytes(path)]))
      for (const r of parsed.records) {
        const aligned = alignRecord(deps, { record: r, policy: parsed.metadata!.policy })
        compared++
        const mine = [aligned.dkimAligned ? 'pass' : 'fail', aligned.spfAligned ? 'pass' : 'fail']
        if (mine.join() !== [r.dkimEvaluated, r.spfEvaluated].join()) {
          disagreements.push(`${path.split('/').at(-1)} ${r.sourceIp}`)
        }
      }
    }
    expect(compared).toBe(2350)
    expect(disagreements).toEqual(expectedDisagreements)
  })
})

describe('normalizeResult', () => {
  test('maps reporter values to the closed set', () => {
    const cases: [string | null, string][] = [
      ['pass', 'pass'],
      ['PASS', 'pass'],
      [' Pass ', 'pass'],
      ['fail', 'fail'],
      ['hardfail', 'fail'],
      ['softfail', 'softfail'],
      ['neutral', 'neutral'],
      ['none', 'none'],
      ['temperror', 'temperror'],
      ['temp_error', 'temperror'],
      ['PermError', 'permerror'],
      ['policy', 'policy'],
      ['unused', 'other'],
      ['constructor', 'other'],
      ['', 'other'],
      [null, 'other'],
    ]
    expect(cases.map(([value]) => [value, normalizeResult(value)])).toEqual(cases)
  })
})

describe('normalizeDisposition', () => {
  test('none, quarantine, reject; RFC 9990 pass counts as none; the rest is other', () => {
    const cases: [string | null, string][] = [
      ['none', 'none'],
      ['pass', 'none'],
      ['QUARANTINE', 'quarantine'],
      ['reject', 'reject'],
      ['quarantined', 'other'],
      ['', 'other'],
      [null, 'other'],
    ]
    expect(cases.map(([value]) => [value, normalizeDisposition(value)])).toEqual(cases)
  })
})
