import { describe, expect, test } from 'bun:test'
import {
  COMMON_DKIM_SELECTORS,
  checkDkimSelectors,
  selectorsToCheck,
} from '../../../domain/dkim/selectors.ts'
import type { DnsAnswer, DnsResolver, RecordType } from '../../../domain/dns/ports.ts'
import { zone } from '../dmarc/zone.ts'
import { ED25519_RAW, RSA_1024_SPKI, RSA_2048_SPKI } from './keys.ts'

describe('selectorsToCheck', () => {
  test('configured first, then learned, then the built-in list, without duplicates', () => {
    const candidates = selectorsToCheck(['Custom', 'google'], ['s1', 'custom', 'mailer2024 '])
    expect(candidates.slice(0, 4)).toEqual([
      { selector: 'custom', origin: 'configured' },
      { selector: 'google', origin: 'configured' },
      { selector: 's1', origin: 'learned' },
      { selector: 'mailer2024', origin: 'learned' },
    ])
    const names = candidates.map((candidate) => candidate.selector)
    expect(new Set(names).size).toBe(names.length)
    expect(candidates.filter((candidate) => candidate.origin === 'common')).toHaveLength(
      COMMON_DKIM_SELECTORS.length - 2,
    )
  })

  test('the built-in list covers the major providers', () => {
    const names = COMMON_DKIM_SELECTORS.map((entry) => entry.selector)
    for (const selector of [
      'google',
      'selector1',
      'selector2',
      'k1',
      's1',
      'fm1',
      'protonmail',
      'sig1',
      '20230601',
    ]) {
      expect(names).toContain(selector)
    }
    expect(new Set(names).size).toBe(names.length)
  })
})

describe('checkDkimSelectors', () => {
  const dns = zone({
    'google._domainkey.example.com': `v=DKIM1; k=rsa; p=${RSA_2048_SPKI}`,
    'selector1._domainkey.example.com': [
      [`v=DKIM1; k=rsa; p=${RSA_1024_SPKI.slice(0, 100)}`, RSA_1024_SPKI.slice(100)],
    ],
    'ed._domainkey.example.com': `v=DKIM1; k=ed25519; p=${ED25519_RAW}`,
    'old._domainkey.example.com': 'v=DKIM1; p=',
    'spf._domainkey.example.com': 'v=spf1 -all',
  })

  test('found keys are parsed, absent guesses are left out, a missing configured selector is reported', async () => {
    const candidates = selectorsToCheck(
      ['ed', 'gone', 'old'],
      ['selector1'],
      [
        { selector: 'google', provider: 'Google Workspace' },
        { selector: 'k1', provider: 'Mailchimp' },
        { selector: 'spf', provider: 'none' },
      ],
    )
    const report = await checkDkimSelectors({ dns }, 'Example.com', candidates)
    expect(report.domain).toBe('example.com')
    expect(report.checked).toBe(7)
    const summary = report.selectors.map((check) => [check.selector, check.origin, check.status])
    expect(summary).toEqual([
      ['ed', 'configured', 'found'],
      ['gone', 'configured', 'missing'],
      ['old', 'configured', 'found'],
      ['selector1', 'learned', 'found'],
      ['google', 'common', 'found'],
    ])
    const byName = Object.fromEntries(report.selectors.map((check) => [check.selector, check]))
    expect(byName.ed).toMatchObject({ record: { key: { type: 'ed25519' } }, findings: [] })
    expect(byName.old).toMatchObject({ record: { revoked: true }, findings: [{ code: 'key_revoked' }] })
    // The two character-strings of the TXT record are joined before parsing.
    expect(byName.selector1).toMatchObject({
      name: 'selector1._domainkey.example.com',
      record: { key: { bits: 1024 } },
      findings: [{ code: 'rsa_key_below_recommended' }],
    })
    expect(report.findings).toMatchObject([{ code: 'selector_missing', severity: 'high' }])
    expect(report.findings[0]?.message).toContain('gone._domainkey.example.com')
  })

  test('invalid selectors are skipped with a finding', async () => {
    const report = await checkDkimSelectors({ dns }, 'example.com', [
      { selector: 'bad selector', origin: 'configured' },
      { selector: 'google', origin: 'configured' },
    ])
    expect(report.checked).toBe(1)
    expect(report.findings).toMatchObject([{ code: 'invalid_selector', severity: 'medium' }])
  })

  test('lookup failures are reported for configured selectors and skipped for guesses', async () => {
    const failing = zone({
      'a._domainkey.example.com': { status: 'timeout' },
      'b._domainkey.example.com': { status: 'error', reason: 'SERVFAIL' },
    })
    const report = await checkDkimSelectors({ dns: failing }, 'example.com', [
      { selector: 'a', origin: 'configured' },
      { selector: 'b', origin: 'common' },
    ])
    expect(report.selectors).toEqual([
      {
        selector: 'a',
        origin: 'configured',
        name: 'a._domainkey.example.com',
        status: 'temperror',
        reason: 'timeout',
      },
    ])
    expect(report.findings).toMatchObject([{ code: 'selector_lookup_failed' }])
  })

  test('several key records at one name are flagged', async () => {
    const twice = zone({ 'k._domainkey.example.com': [`p=${RSA_2048_SPKI}`, `p=${ED25519_RAW}; k=ed25519`] })
    const report = await checkDkimSelectors({ dns: twice }, 'example.com', [
      { selector: 'k', origin: 'learned' },
    ])
    expect(report.findings).toMatchObject([{ code: 'multiple_key_records' }])
  })

  test('queries run with bounded concurrency', async () => {
    let active = 0
    let peak = 0
    const slow: DnsResolver = {
      async resolve(_name: string, _type: RecordType): Promise<DnsAnswer> {
        active++
        peak = Math.max(peak, active)
        await new Promise((resolve) => setTimeout(resolve, 2))
        active--
        return { status: 'nxdomain' }
      },
    }
    const candidates = selectorsToCheck([], [])
    const report = await checkDkimSelectors({ dns: slow }, 'example.com', candidates, { concurrency: 3 })
    expect(peak).toBe(3)
    expect(report.checked).toBe(candidates.length)
    expect(report.selectors).toEqual([])
  })
})
