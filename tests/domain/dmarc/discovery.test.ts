import { describe, expect, test } from 'bun:test'
import { discoverDmarc, treeWalkNames } from '../../../domain/dmarc/discovery.ts'
import type { DnsAnswer } from '../../../domain/dns/ports.ts'
import { zone } from './zone.ts'

const A: DnsAnswer = {
  status: 'ok',
  authenticated: false,
  records: [{ type: 'A', address: '192.0.2.1', ttl: 60 }],
}
const codes = (findings: { code: string }[]) => findings.map((finding) => finding.code)

describe('treeWalkNames (RFC 9989 §4.10)', () => {
  test('the RFC example: 13 labels take eight queries', () => {
    expect(treeWalkNames('a.b.c.d.e.f.g.h.i.j.mail.example.com')).toEqual([
      'a.b.c.d.e.f.g.h.i.j.mail.example.com',
      'g.h.i.j.mail.example.com',
      'h.i.j.mail.example.com',
      'i.j.mail.example.com',
      'j.mail.example.com',
      'mail.example.com',
      'example.com',
      'com',
    ])
  })

  test('exactly 8 labels also jumps to 7 and stays within eight queries', () => {
    const names = treeWalkNames('a.b.c.d.e.f.example.com')
    expect(names).toHaveLength(8)
    expect(names[1]).toBe('b.c.d.e.f.example.com')
  })

  test('short names lose one label at a time', () => {
    expect(treeWalkNames('a.mail.example.com')).toEqual([
      'a.mail.example.com',
      'mail.example.com',
      'example.com',
      'com',
    ])
    expect(treeWalkNames('com')).toEqual(['com'])
  })
})

describe('discoverDmarc', () => {
  test('a record at the domain itself applies through p', async () => {
    const dns = zone({ '_dmarc.example.com': 'v=DMARC1; p=reject; rua=mailto:d@example.com' })
    const result = await discoverDmarc({ dns }, 'Example.COM.')
    expect(result).toMatchObject({
      domain: 'example.com',
      policyDomain: 'example.com',
      policyRole: 'author_domain',
      appliedPolicy: { tag: 'p', policy: 'reject', testing: false },
      organizationalDomain: 'example.com',
      source: 'tree_walk',
      complete: true,
    })
    // The walk goes on past the policy record to find the Organizational Domain (RFC 9989 §4.10.2).
    expect(dns.queries).toEqual(['_dmarc.example.com|TXT', '_dmarc.com|TXT'])
    expect(result.queries.map((query) => query.outcome)).toEqual(['record', 'none'])
    expect(result.findings).toEqual([])
  })

  test('a record at the organizational domain only: sp for an existing subdomain', async () => {
    const dns = zone({
      '_dmarc.example.com': 'v=DMARC1; p=none; sp=quarantine; np=reject; rua=mailto:d@example.com',
      'mail.example.com|A': A,
    })
    const result = await discoverDmarc({ dns }, 'mail.example.com')
    expect(result).toMatchObject({
      policyDomain: 'example.com',
      policyRole: 'organizational_domain',
      organizationalDomain: 'example.com',
      domainExists: true,
      appliedPolicy: { tag: 'sp', policy: 'quarantine' },
    })
    expect(codes(result.findings)).toEqual(['inherited_policy'])
    expect(dns.queries).toContain('mail.example.com|A')
  })

  test('np applies to a non-existent subdomain (NXDOMAIN, RFC 9989 §3.2.13)', async () => {
    const dns = zone({
      '_dmarc.example.com': 'v=DMARC1; p=none; sp=quarantine; np=reject; rua=mailto:d@example.com',
    })
    const result = await discoverDmarc({ dns }, 'ghost.example.com')
    expect(result.domainExists).toBe(false)
    expect(result.appliedPolicy).toEqual({ tag: 'np', policy: 'reject', testing: false })
  })

  test('the long RFC example name is walked in eight queries', async () => {
    const long = 'a.b.c.d.e.f.g.h.i.j.mail.example.com'
    const dns = zone({ '_dmarc.example.com': 'v=DMARC1; p=reject', [`${long}|A`]: A })
    const result = await discoverDmarc({ dns }, long)
    expect(result.queries.map((query) => query.name)).toEqual(
      treeWalkNames(long).map((name) => `_dmarc.${name}`),
    )
    expect(result).toMatchObject({
      organizationalDomain: 'example.com',
      appliedPolicy: { tag: 'sp', policy: 'reject' },
    })
  })

  test('records at two levels: the one with the fewest labels is the organizational domain', async () => {
    // RFC 9989 §4.10.2 example: records at mail.example.com and example.com, walk from a.mail.example.com.
    const dns = zone({
      '_dmarc.mail.example.com': 'v=DMARC1; p=none; sp=none',
      '_dmarc.example.com': 'v=DMARC1; p=reject; sp=reject',
      'a.mail.example.com|A': A,
    })
    const result = await discoverDmarc({ dns }, 'a.mail.example.com')
    expect(result.organizationalDomain).toBe('example.com')
    expect(result.policyDomain).toBe('example.com')
    expect(result.appliedPolicy?.policy).toBe('reject')
  })

  test('psd=n stops the walk and makes that domain the organizational domain', async () => {
    const dns = zone({
      '_dmarc.mail.example.com': 'v=DMARC1; p=quarantine; psd=n',
      '_dmarc.example.com': 'v=DMARC1; p=reject',
      'a.mail.example.com|A': A,
    })
    const result = await discoverDmarc({ dns }, 'a.mail.example.com')
    expect(result.organizationalDomain).toBe('mail.example.com')
    expect(result.policyDomain).toBe('mail.example.com')
    expect(dns.queries).not.toContain('_dmarc.example.com|TXT')
    // The Public Suffix List says example.com, so RFC 7489 receivers would disagree.
    expect(codes(result.findings)).toContain('org_domain_differs_from_psl')
  })

  test('psd=y at com: the organizational domain is one label below and the PSD policy applies', async () => {
    // RFC 9989 §4.10.2 last example.
    const dns = zone({ '_dmarc.com': 'v=DMARC1; p=reject; np=reject; psd=y', 'a.mail.example.com|A': A })
    const result = await discoverDmarc({ dns }, 'a.mail.example.com')
    expect(result).toMatchObject({
      organizationalDomain: 'example.com',
      policyDomain: 'com',
      policyRole: 'public_suffix_domain',
      appliedPolicy: { tag: 'sp', policy: 'reject' },
    })
    expect(codes(result.findings)).toContain('psd_policy_applies')
  })

  test('psd=y above an organizational record: the record one label below applies', async () => {
    const dns = zone({
      '_dmarc.gov.example': 'v=DMARC1; p=reject; psd=y',
      '_dmarc.agency.gov.example': 'v=DMARC1; p=none; sp=quarantine',
      'x.agency.gov.example|A': A,
    })
    const result = await discoverDmarc({ dns }, 'x.agency.gov.example')
    expect(result).toMatchObject({
      organizationalDomain: 'agency.gov.example',
      policyRole: 'organizational_domain',
      appliedPolicy: { tag: 'sp', policy: 'quarantine' },
    })
    expect(dns.queries).not.toContain('_dmarc.example|TXT')
  })

  test('psd=y at the starting domain itself is ignored for the organizational domain', async () => {
    const dns = zone({ '_dmarc.gov.example': 'v=DMARC1; p=reject; psd=y' })
    const result = await discoverDmarc({ dns }, 'gov.example')
    expect(result).toMatchObject({ organizationalDomain: 'gov.example', policyRole: 'author_domain' })
    expect(dns.queries).toEqual(['_dmarc.gov.example|TXT'])
  })

  test('multiple records are treated as none (RFC 7489 §6.6.3, RFC 9989 §4.10)', async () => {
    const dns = zone({
      '_dmarc.mail.example.com': ['v=DMARC1; p=reject', 'v=DMARC1; p=none'],
      '_dmarc.example.com': 'v=DMARC1; p=quarantine',
      'mail.example.com|A': A,
    })
    const result = await discoverDmarc({ dns }, 'mail.example.com')
    expect(result.queries[0]?.outcome).toBe('multiple')
    expect(result.policyDomain).toBe('example.com')
    expect(result.findings).toContainEqual(
      expect.objectContaining({ code: 'multiple_records', severity: 'high' }),
    )
  })

  test('multiple records and nothing above: no policy applies', async () => {
    const dns = zone({ '_dmarc.example.com': ['v=DMARC1; p=reject', 'v=DMARC1; p=reject'] })
    const result = await discoverDmarc({ dns }, 'example.com')
    expect(result.appliedPolicy).toBeNull()
    expect(codes(result.findings)).toEqual(['multiple_records', 'public_suffix_fallback', 'no_dmarc_record'])
  })

  test('nothing found: the public suffix list gives the organizational domain', async () => {
    const dns = zone({ 'shop.example.co.uk|A': A })
    const result = await discoverDmarc({ dns }, 'shop.example.co.uk')
    expect(result).toMatchObject({
      source: 'public_suffix_fallback',
      organizationalDomain: 'example.co.uk',
      policyDomain: null,
      appliedPolicy: null,
    })
    expect(result.queries).toHaveLength(4)
    expect(codes(result.findings)).toEqual(['public_suffix_fallback', 'no_dmarc_record'])
  })

  test('non-DMARC TXT records are discarded, near misses are reported', async () => {
    const dns = zone({ '_dmarc.example.com': ['v=spf1 -all', 'v=dmarc1; p=reject'] })
    const result = await discoverDmarc({ dns }, 'example.com')
    expect(result.queries[0]?.outcome).toBe('none')
    expect(result.findings[0]).toMatchObject({ code: 'record_ignored', severity: 'high' })
    expect(result.findings[0]?.message).toContain('case-sensitive')
  })

  test('the character-strings of a TXT record are joined without spaces', async () => {
    const dns = zone({ '_dmarc.example.com': [['v=DMARC1; p=rej', 'ect; rua=mailto:d@example.com']] })
    const result = await discoverDmarc({ dns }, 'example.com')
    expect(result.appliedPolicy?.policy).toBe('reject')
    expect(result.rawRecord).toBe('v=DMARC1; p=reject; rua=mailto:d@example.com')
  })

  test('an unusable record means no policy', async () => {
    const dns = zone({ '_dmarc.example.com': 'v=DMARC1; p=bogus' })
    const result = await discoverDmarc({ dns }, 'example.com')
    expect(result.appliedPolicy).toBeNull()
    expect(result.policyDomain).toBe('example.com')
    expect(codes(result.recordFindings)).toEqual(['invalid_policy'])
    expect(codes(result.findings)).toEqual(['policy_record_unusable'])
  })

  test('t=y is reported with the applied policy', async () => {
    const dns = zone({ '_dmarc.example.com': 'v=DMARC1; p=reject; t=y' })
    expect((await discoverDmarc({ dns }, 'example.com')).appliedPolicy).toEqual({
      tag: 'p',
      policy: 'reject',
      testing: true,
    })
  })

  test('a DNS failure is reported and marks the result incomplete', async () => {
    const dns = zone({
      '_dmarc.mail.example.com': { status: 'timeout' },
      '_dmarc.example.com': 'v=DMARC1; p=reject',
      'mail.example.com|A': A,
    })
    const result = await discoverDmarc({ dns }, 'mail.example.com')
    expect(result.complete).toBe(false)
    expect(result.queries[0]?.outcome).toBe('temperror')
    expect(codes(result.findings)).toContain('dns_temperror')
    expect(result.policyDomain).toBe('example.com')
  })
})
