import { describe, expect, test } from 'bun:test'
import { parseDmarcRecord } from '../../../domain/dmarc/record.ts'
import { checkBimiDmarcRequirements, lookupBimi, parseBimiRecord } from '../../../domain/mail/bimi.ts'
import { zone } from '../dmarc/zone.ts'

const codes = (result: { findings: { code: string }[] }) => result.findings.map((finding) => finding.code)
const LOGO = 'https://example.com/brand/logo.svg'
const VMC = 'https://example.com/brand/vmc.pem'

function dmarc(txt: string) {
  const parsed = parseDmarcRecord(txt)
  if (!parsed.ok) throw new Error('test DMARC record does not parse')
  return parsed.record
}

describe('parseBimiRecord', () => {
  test('logo and evidence', () => {
    expect(parseBimiRecord(`v=BIMI1; l=${LOGO}; a=${VMC}`)).toEqual({
      ok: true,
      record: {
        raw: `v=BIMI1; l=${LOGO}; a=${VMC}`,
        location: LOGO,
        evidence: VMC,
        declined: false,
        tags: { v: 'BIMI1', l: LOGO, a: VMC },
      },
      findings: [],
    })
  })

  test('a logo without evidence is flagged', () => {
    const result = parseBimiRecord(`v=BIMI1; l=${LOGO};`)
    expect(result.ok && result.record.evidence).toBeNull()
    expect(codes(result)).toEqual(['no_evidence'])
  })

  test('empty l= and a= decline to publish', () => {
    const result = parseBimiRecord('v=BIMI1; l=; a=;')
    expect(result.ok && result.record).toMatchObject({ declined: true, location: null, evidence: null })
    expect(codes(result)).toEqual(['declined'])
  })

  test('a non-SVG path and unknown tags are noted', () => {
    const result = parseBimiRecord(`v=BIMI1; l=https://example.com/logo.png; a=${VMC}; avp=brand; x=1`)
    expect(result.ok).toBe(true)
    expect(codes(result)).toEqual(['unknown_tag', 'location_not_svg'])
  })

  test.each([
    [`l=${LOGO}; v=BIMI1`, 'not_bimi'],
    [`v=bimi1; l=${LOGO}`, 'invalid_version'],
    ['v=BIMI1; a=', 'missing_location'],
    ['v=BIMI1; l=http://example.com/logo.svg', 'insecure_location'],
    ['v=BIMI1; l=https://localhost/logo.svg', 'insecure_location'],
    [`v=BIMI1; l=${LOGO},${LOGO}`, 'invalid_location'],
    ['v=BIMI1; l=not a url', 'invalid_location'],
    [`v=BIMI1; l=${LOGO}; a=http://example.com/vmc.pem`, 'insecure_evidence'],
    [`v=BIMI1; l=${LOGO}; l=${LOGO}`, 'duplicate_tag'],
    [`v=BIMI1; garbage; l=${LOGO}`, 'invalid_tag_syntax'],
  ])('%p -> %s', (txt, code) => {
    const result = parseBimiRecord(txt)
    expect(result.ok).toBe(false)
    expect(codes(result)).toEqual([code])
  })
})

describe('checkBimiDmarcRequirements', () => {
  test('quarantine or reject on all mail is eligible', () => {
    expect(checkBimiDmarcRequirements(dmarc('v=DMARC1; p=reject'))).toEqual({ eligible: true, findings: [] })
    expect(checkBimiDmarcRequirements(dmarc('v=DMARC1; p=quarantine; pct=100')).eligible).toBe(true)
  })

  test.each([
    ['v=DMARC1; p=none', 'dmarc_not_enforced'],
    ['v=DMARC1; p=reject; sp=none', 'dmarc_subdomains_not_enforced'],
    ['v=DMARC1; p=quarantine; pct=50', 'dmarc_pct_below_100'],
    ['v=DMARC1; p=reject; t=y', 'dmarc_testing'],
    // An invalid p with a valid rua is treated as p=none (RFC 9989 §4.10.1).
    ['v=DMARC1; p=enforce; rua=mailto:d@example.com', 'dmarc_not_enforced'],
  ])('%p -> %s', (txt, code) => {
    const result = checkBimiDmarcRequirements(dmarc(txt))
    expect(result.eligible).toBe(false)
    expect(codes(result)).toEqual([code])
  })
})

describe('lookupBimi', () => {
  const dns = zone({
    'default._bimi.example.com': `v=BIMI1; l=${LOGO}; a=${VMC}`,
    'brand._bimi.example.com': `v=BIMI1; l=${LOGO}; a=${VMC}`,
    'default._bimi.two.example': [`v=BIMI1; l=${LOGO}`, `v=BIMI1; l=${LOGO}`],
  })

  test('the default selector, a named selector, and the organizational domain fallback', async () => {
    expect(await lookupBimi({ dns }, { domain: 'example.com' })).toMatchObject({
      status: 'found',
      name: 'default._bimi.example.com',
    })
    expect(await lookupBimi({ dns }, { domain: 'example.com', selector: 'brand' })).toMatchObject({
      name: 'brand._bimi.example.com',
    })
    const fallback = await lookupBimi(
      { dns },
      { domain: 'news.example.com', organizationalDomain: 'example.com' },
    )
    expect(fallback).toMatchObject({ status: 'found', name: 'default._bimi.example.com' })
    expect(await lookupBimi({ dns }, { domain: 'news.example.com' })).toMatchObject({ status: 'none' })
  })

  test('several records are ignored', async () => {
    expect(await lookupBimi({ dns }, { domain: 'two.example' })).toMatchObject({
      status: 'invalid',
      findings: [{ code: 'multiple_records' }],
    })
  })
})
