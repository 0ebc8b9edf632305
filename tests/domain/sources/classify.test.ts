import { describe, expect, test } from 'bun:test'
import { indexCatalog, loadCatalog, SHIPPED_CATALOG_INDEX } from '../../../domain/sources/catalog.ts'
import {
  type Classification,
  classifySource,
  type SourceEvidence,
  type SourceRates,
  statusOf,
} from '../../../domain/sources/classify.ts'

const idx = SHIPPED_CATALOG_INDEX

// 192.0.2.0/24 (RFC 5737 TEST-NET-1) is in no catalog network, so only names vote.
const evidence = (fields: Partial<SourceEvidence>): SourceEvidence => ({
  ip: '192.0.2.10',
  ptr: null,
  spfIncludes: [],
  dkimDomains: [],
  headerFrom: 'example.com',
  ...fields,
})

const classify = (fields: Partial<SourceEvidence>) => classifySource(idx, evidence(fields))
const brief = (c: Classification) => ({ service: c.service?.id ?? null, confidence: c.confidence })

describe('classifySource: a single kind of evidence', () => {
  test('no evidence: no service, low confidence', () => {
    expect(classify({ ptr: 'host.isp.example', spfIncludes: ['spf.unknown.example'] })).toEqual({
      service: null,
      confidence: 'low',
      evidence: [],
    })
  })

  test('a documented network alone is high', () => {
    const c = classify({ ip: '209.85.220.41' })
    expect(c).toEqual({
      service: {
        id: 'google_workspace',
        name: 'Google Workspace',
        category: 'email_platform',
        docs: 'https://support.google.com/a/answer/33786',
        forwarder: false,
      },
      confidence: 'high',
      evidence: [{ kind: 'network', value: '209.85.128.0/17', service: 'google_workspace' }],
    })
  })

  test('a forward-confirmed PTR alone is high; an unconfirmed one medium', () => {
    const ptr = 'o1.outbound-mail.sendgrid.net'
    expect(brief(classify({ ptr, ptrConfirmed: true }))).toEqual({ service: 'sendgrid', confidence: 'high' })
    expect(brief(classify({ ptr, ptrConfirmed: false }))).toEqual({
      service: 'sendgrid',
      confidence: 'medium',
    })
    expect(brief(classify({ ptr }))).toEqual({ service: 'sendgrid', confidence: 'medium' })
    expect(classify({ ptr: 'O1.Outbound-Mail.SendGrid.NET.' }).evidence).toEqual([
      { kind: 'ptr', value: 'o1.outbound-mail.sendgrid.net', service: 'sendgrid' },
    ])
  })

  test('an SPF include alone is medium', () => {
    const c = classify({ spfIncludes: ['spf.mandrillapp.com'] })
    expect(brief(c)).toEqual({ service: 'mandrill', confidence: 'medium' })
    expect(c.evidence).toEqual([{ kind: 'spf_include', value: 'spf.mandrillapp.com', service: 'mandrill' }])
  })

  test('a DKIM domain alone is medium', () => {
    expect(brief(classify({ dkimDomains: ['pm.mtasv.net'] }))).toEqual({
      service: 'postmark',
      confidence: 'medium',
    })
  })

  test('names only match on label boundaries', () => {
    expect(brief(classify({ ptr: 'mail.evilsendgrid.net', ptrConfirmed: true }))).toEqual({
      service: null,
      confidence: 'low',
    })
    expect(classify({ dkimDomains: ['notsendgrid.net'], spfIncludes: ['x.sendgrid.net'] }).evidence).toEqual(
      [],
    )
  })

  test('an unparsable IP is no evidence, not an error', () => {
    expect(brief(classify({ ip: 'unknown', spfIncludes: ['sendgrid.net'] }))).toEqual({
      service: 'sendgrid',
      confidence: 'medium',
    })
  })
})

describe('classifySource: agreement and conflict', () => {
  test('two independent kinds agreeing are high', () => {
    const c = classify({ ptr: 'a8-1.smtp-out.amazonses.com', dkimDomains: ['amazonses.com'] })
    expect(brief(c)).toEqual({ service: 'amazon_ses', confidence: 'high' })
    expect(c.evidence.map((e) => e.kind)).toEqual(['ptr', 'dkim_domain'])
  })

  test('several values of one kind are still one kind', () => {
    const c = classify({ dkimDomains: ['mcsv.net', 'k2.mcsv.net'] })
    expect(brief(c)).toEqual({ service: 'mailchimp', confidence: 'medium' })
    expect(c.evidence).toHaveLength(2)
  })

  test('conflicting votes: the service with the most kinds wins, with low confidence', () => {
    const c = classify({
      ptr: 'o1.outbound-mail.sendgrid.net',
      ptrConfirmed: true,
      spfIncludes: ['mailgun.org'],
      dkimDomains: ['mailgun.org'],
    })
    expect(brief(c)).toEqual({ service: 'mailgun', confidence: 'low' })
    expect(c.evidence).toEqual([
      { kind: 'ptr', value: 'o1.outbound-mail.sendgrid.net', service: 'sendgrid' },
      { kind: 'spf_include', value: 'mailgun.org', service: 'mailgun' },
      { kind: 'dkim_domain', value: 'mailgun.org', service: 'mailgun' },
    ])
  })

  test('a tie goes to the stronger evidence: network > ptr > spf_include > dkim_domain', () => {
    expect(brief(classify({ ip: '167.89.1.1', ptr: 'mail-sor-f41.google.com' }))).toEqual({
      service: 'sendgrid',
      confidence: 'low',
    })
    expect(brief(classify({ ptr: 'o1.outbound-mail.sendgrid.net', spfIncludes: ['mailgun.org'] }))).toEqual({
      service: 'sendgrid',
      confidence: 'low',
    })
    expect(brief(classify({ spfIncludes: ['spf.mtasv.net'], dkimDomains: ['sendgrid.net'] }))).toEqual({
      service: 'postmark',
      confidence: 'low',
    })
  })

  test('a tie of equal evidence goes to the smaller id', () => {
    const c = classify({ dkimDomains: ['sendgrid.net', 'mcsv.net'] })
    expect(brief(c)).toEqual({ service: 'mailchimp', confidence: 'low' })
    expect(brief(classify({ dkimDomains: ['mcsv.net', 'sendgrid.net'] }))).toEqual(brief(c))
  })

  test('a tie of equal kinds compares the strongest kind first', () => {
    // sendgrid: network + dkim; mailgun: ptr + spf. Two kinds each; sendgrid holds the network.
    const c = classify({
      ip: '149.72.1.1',
      dkimDomains: ['sendgrid.net'],
      ptr: 'm1.mailgun.net',
      spfIncludes: ['mailgun.org'],
    })
    expect(brief(c)).toEqual({ service: 'sendgrid', confidence: 'low' })
  })
})

describe('classifySource: first-party DKIM and services on shared infrastructure', () => {
  test("a d= at or under the header From's organizational domain is not third-party evidence", () => {
    const c = classify({
      headerFrom: 'news.example.co.uk',
      ptr: 'o1.outbound-mail.sendgrid.net',
      dkimDomains: ['example.co.uk', 'em123.example.co.uk', 'EXAMPLE.CO.UK.'],
    })
    expect(brief(c)).toEqual({ service: 'sendgrid', confidence: 'medium' })
    expect(c.evidence.map((e) => e.kind)).toEqual(['ptr'])
  })

  test('a third-party d= still votes when it merely resembles the From domain', () => {
    const c = classify({ headerFrom: 'sendgrid-news.example', dkimDomains: ['sendgrid.net'] })
    expect(brief(c)).toEqual({ service: 'sendgrid', confidence: 'medium' })
  })

  test('Google Groups: Google infrastructure plus a googlegroups.com signature', () => {
    const c = classify({
      ip: '209.85.220.41',
      ptr: 'mail-sor-f41.google.com',
      ptrConfirmed: true,
      dkimDomains: ['googlegroups.com', 'example.com'],
    })
    expect(brief(c)).toEqual({ service: 'google_groups', confidence: 'high' })
    expect(c.service?.forwarder).toBe(true)
    expect(c.evidence).toEqual([
      { kind: 'network', value: '209.85.128.0/17', service: 'google_workspace' },
      { kind: 'ptr', value: 'mail-sor-f41.google.com', service: 'google_workspace' },
      { kind: 'dkim_domain', value: 'googlegroups.com', service: 'google_groups' },
    ])
  })

  test("a service does not win on its base's evidence alone", () => {
    expect(brief(classify({ ip: '209.85.220.41' })).service).toBe('google_workspace')
    expect(brief(classify({ dkimDomains: ['googlegroups.com'] }))).toEqual({
      service: 'google_groups',
      confidence: 'medium',
    })
  })

  test('evidence for an unrelated service is still a conflict', () => {
    const c = classify({ ip: '209.85.220.41', dkimDomains: ['googlegroups.com', 'sendgrid.net'] })
    expect(brief(c)).toEqual({ service: 'google_groups', confidence: 'low' })
  })
})

describe('classifySource: determinism', () => {
  test('the order and repetition of inputs do not change the output', () => {
    const a = classify({
      ip: '149.72.1.1',
      ptr: 'o1.outbound-mail.sendgrid.net',
      spfIncludes: ['sendgrid.net', 'mailgun.org'],
      dkimDomains: ['mcsv.net', 'sendgrid.net'],
    })
    const b = classify({
      ip: '149.72.1.1',
      ptr: 'o1.outbound-mail.sendgrid.net',
      spfIncludes: ['MAILGUN.ORG', 'sendgrid.net', 'mailgun.org.'],
      dkimDomains: ['sendgrid.net', 'mcsv.net', 'sendgrid.net'],
    })
    expect(b).toEqual(a)
    expect(a.evidence.map((e) => `${e.kind}:${e.value}`)).toEqual([
      'network:149.72.0.0/16',
      'ptr:o1.outbound-mail.sendgrid.net',
      'spf_include:mailgun.org',
      'spf_include:sendgrid.net',
      'dkim_domain:mcsv.net',
      'dkim_domain:sendgrid.net',
    ])
    expect(brief(a)).toEqual({ service: 'sendgrid', confidence: 'low' })
  })

  test('works on any catalog, not only the shipped one', () => {
    const custom = indexCatalog(
      loadCatalog({
        version: 't',
        services: [
          {
            id: 'relay',
            name: 'Relay',
            category: 'transactional',
            docs: 'https://relay.example/docs',
            spf_includes: ['spf.relay.example'],
            ptr_suffixes: [],
            dkim_domains: [],
            networks: ['2001:db8:1::/48'],
          },
        ],
      }),
    )
    const c = classifySource(custom, evidence({ ip: '2001:db8:1::25', spfIncludes: ['spf.relay.example'] }))
    expect(brief(c)).toEqual({ service: 'relay', confidence: 'high' })
    expect(c.evidence).toHaveLength(2)
  })
})

describe('statusOf', () => {
  const known = classify({ ptr: 'o1.outbound-mail.sendgrid.net' })
  const forwarder = classify({ dkimDomains: ['googlegroups.com'] })
  const unknown = classify({})
  const rates = (fields: Partial<SourceRates>): SourceRates => ({
    messages: 100,
    dmarcPass: 0,
    hasPtr: false,
    ...fields,
  })

  test('a user override wins; unwanted is shown as suspicious', () => {
    expect(statusOf(unknown, rates({}), 'legitimate')).toBe('legitimate')
    expect(statusOf(known, rates({ dmarcPass: 100 }), 'unwanted')).toBe('suspicious')
    expect(statusOf(known, rates({ dmarcPass: 100 }), 'forwarder')).toBe('forwarder')
    expect(statusOf(forwarder, rates({}), 'legitimate')).toBe('legitimate')
  })

  test('a known service with any aligned pass is legitimate; without one, unknown', () => {
    expect(statusOf(known, rates({ dmarcPass: 1 }), null)).toBe('legitimate')
    expect(statusOf(known, rates({ dmarcPass: 0 }), null)).toBe('unknown')
    expect(statusOf(known, rates({ dmarcPass: 0, hasPtr: false }), null)).toBe('unknown')
  })

  test('a forwarding service is a forwarder whatever its results', () => {
    expect(statusOf(forwarder, rates({ dmarcPass: 0 }), null)).toBe('forwarder')
    expect(statusOf(forwarder, rates({ dmarcPass: 50 }), null)).toBe('forwarder')
  })

  test('an unknown source failing everything without a PTR is suspicious', () => {
    expect(statusOf(unknown, rates({}), null)).toBe('suspicious')
    expect(statusOf(unknown, rates({ hasPtr: true }), null)).toBe('unknown')
    expect(statusOf(unknown, rates({ dmarcPass: 1 }), null)).toBe('unknown')
    expect(statusOf(unknown, rates({ messages: 0 }), null)).toBe('unknown')
  })
})
