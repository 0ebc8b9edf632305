import { describe, expect, test } from 'bun:test'
import { type Recommendation, sourceRecommendations } from '../../../domain/sources/intelligence.ts'
import { compareRecommendations, type SourceInput } from '../../../domain/sources/recommendation.ts'
import { days, google, input, type SourceOptions, shuffled, source } from './intelligence-fixtures.ts'

const sendgrid = (fields: Parameters<typeof source>[1] = {}, options: SourceOptions = {}) =>
  source(
    '149.72.10.1',
    {
      messages: 4_000,
      dkimPass: 4_000,
      dkimDomains: ['sendgrid.net'],
      spfDomains: ['example.com'],
      ptr: 'o1.sendgrid.net',
      ...fields,
    },
    { service: 'sendgrid', ...options },
  )

const spoofer = (ip: string, messages: number, fields: Parameters<typeof source>[1] = {}) =>
  source(ip, { messages, ...fields })

/** A realistic month: Google aligned, SendGrid and Mailchimp not set up, a mailing list, spoofing, a stranger. */
const realistic = () =>
  input({
    spf: {
      record: 'v=spf1 include:_spf.google.com include:spf.protection.outlook.com ip4:192.0.2.0/24 ~all',
      lookups: 6,
      includes: ['_spf.google.com', 'spf.protection.outlook.com'],
    },
    sources: [
      google(30_000),
      sendgrid(),
      source(
        '205.201.131.10',
        {
          messages: 2_000,
          dkimPass: 2_000,
          dkimDomains: ['mcsv.net'],
          spfPass: 2_000,
          spfDomains: ['mcsv.net'],
        },
        { service: 'mailchimp' },
      ),
      source(
        '209.85.220.69',
        { messages: 1_000, dmarcPass: 600, dkimAligned: 600, dkimPass: 700, forwarded: 300 },
        { service: 'google_groups' },
      ),
      spoofer('198.51.100.7', 500),
      spoofer('198.51.100.8', 300),
      spoofer('198.51.100.9', 200),
      source('203.0.113.50', { messages: 1_200, ptr: 'mail.partner.example' }),
    ],
    daily: days(14, 1_300, 1_100),
  })

const byId = (list: Recommendation[], id: string) => list.find((r) => r.id === id)
const ids = (list: Recommendation[]) => list.map((r) => r.id)

describe('sourceRecommendations on a realistic domain', () => {
  const list = sourceRecommendations(realistic())

  test('every type fires once, sorted by priority, then messages, then id', () => {
    expect(list.map((r) => [r.id, r.priority, r.effect.messages])).toEqual([
      ['authorize_service:sendgrid', 'high', 4_000],
      ['enable_dkim:sendgrid', 'high', 4_000],
      ['enable_dkim:mailchimp', 'high', 2_000],
      ['block_spoofing:example.com', 'high', 1_000],
      ['forwarding:google_groups', 'medium', 400],
      ['unknown_sources:example.com', 'low', 1_200],
    ])
  })

  test('titles carry the figures, formatted without the locale', () => {
    expect(list.map((r) => r.title)).toEqual([
      'Authorise SendGrid: add include:sendgrid.net (SPF lookups 6 → 7)',
      'Enable DKIM at SendGrid (selector s1): 0.0% of its 4,000 messages are DKIM-aligned',
      'Enable DKIM at Mailchimp (selector k2): 0.0% of its 2,000 messages are DKIM-aligned',
      'Block spoofing: 3 IPs sent 1,000 messages (2.5%) failing SPF, DKIM and DMARC over 30 days: likely spoofing, safe to reject',
      'Forwarding via Google Groups: alignment breaks at Google Groups, DKIM survives on 60.0% of 1,000 messages',
      'Investigate 1 unknown source: 1,200 messages (3.0%) over 30 days',
    ])
  })

  test('changes name the record, the value and the provider docs', () => {
    expect(byId(list, 'authorize_service:sendgrid')!.change).toEqual({
      kind: 'spf_add_include',
      record: 'example.com',
      value: 'include:sendgrid.net',
      service: 'sendgrid',
      docs: 'https://www.twilio.com/docs/sendgrid/ui/account-and-settings/how-to-set-up-domain-authentication',
    })
    expect(byId(list, 'enable_dkim:mailchimp')!.change).toMatchObject({
      kind: 'dkim_enable',
      record: 'k2._domainkey.example.com',
      selector: 'k2',
      service: 'mailchimp',
    })
    expect(byId(list, 'block_spoofing:example.com')!.change).toEqual({
      kind: 'dmarc_policy',
      record: '_dmarc.example.com',
      value: 'p=quarantine',
    })
    expect(byId(list, 'forwarding:google_groups')!.change).toEqual({ kind: 'none', service: 'google_groups' })
    expect(byId(list, 'unknown_sources:example.com')!.change).toEqual({ kind: 'none' })
  })

  test('effects: messages whose outcome changes and their share of the 39,200', () => {
    const auth = byId(list, 'authorize_service:sendgrid')!
    expect(auth.effect.share).toBeCloseTo(4_000 / 39_200, 12)
    expect(auth.effect.description).toContain('confirm the SendGrid account is yours')
    expect(auth.evidence).toMatchObject({ lookupsBefore: 6, lookupsAfter: 7, lookupLimit: 10, dmarcPass: 0 })
    expect(byId(list, 'enable_dkim:sendgrid')!.evidence.signingDomains).toEqual(['sendgrid.net'])
    expect(byId(list, 'enable_dkim:sendgrid')!.effect.description).toContain('d=sendgrid.net')
    const spoof = byId(list, 'block_spoofing:example.com')!
    expect(spoof.evidence).toMatchObject({
      ipCount: 3,
      messages: 1_000,
      unauthenticatedIps: 3,
      policyReady: false,
    })
    expect((spoof.evidence.sources as { ip: string }[]).map((s) => s.ip)).toEqual([
      '198.51.100.7',
      '198.51.100.8',
      '198.51.100.9',
    ])
    // 1,100 / 1,300 a day is 84.6%: the readiness blockers are passed on to the owner.
    expect(spoof.effect.description).toContain(
      'Before advancing: DMARC pass rate 84.6% over 14 days, below 98.0%',
    )
    expect(byId(list, 'forwarding:google_groups')!.effect.description).toContain('ARC seal (RFC 8617)')
  })

  test('the same input in another order gives the same output', () => {
    const base = realistic()
    const again = sourceRecommendations({
      ...base,
      sources: shuffled(base.sources).map((s) => ({
        ...s,
        stats: {
          ...s.stats,
          spfDomains: shuffled(s.stats.spfDomains),
          dkimDomains: shuffled(s.stats.dkimDomains),
        },
      })),
      spf: { ...base.spf, includes: shuffled(base.spf.includes, 1) },
      daily: shuffled(base.daily, 5),
    })
    expect(JSON.stringify(again)).toBe(JSON.stringify(list))
  })

  test('the comparator orders priority before messages and messages before id', () => {
    const rec = (id: string, priority: Recommendation['priority'], messages: number) =>
      ({ id, priority, effect: { messages } }) as Recommendation
    const sorted = [
      rec('b', 'low', 900),
      rec('c', 'high', 5),
      rec('a', 'high', 5),
      rec('d', 'high', 50),
    ].sort(compareRecommendations)
    expect(ids(sorted)).toEqual(['d', 'a', 'c', 'b'])
  })
})

describe('authorize_service', () => {
  const run = (s: SourceInput, spf = input().spf) =>
    sourceRecommendations(input({ sources: [google(96_000), s], spf }))

  test('fires below a 90% DMARC pass rate, not at 90%', () => {
    const at = (dmarcPass: number) =>
      ids(run(sendgrid({ messages: 1_000, dmarcPass, dkimAligned: dmarcPass, dkimPass: 1_000 })))
    expect(at(899)).toContain('authorize_service:sendgrid')
    expect(at(900)).not.toContain('authorize_service:sendgrid')
  })

  test('lookup arithmetic: one more per include, flattening named past 10, change still given', () => {
    const title = (lookups: number) =>
      run(sendgrid(), { ...input().spf, lookups }).find((r) => r.type === 'authorize_service')!
    expect(title(9).title).toBe('Authorise SendGrid: add include:sendgrid.net (SPF lookups 9 → 10)')
    const over = title(10)
    expect(over.title).toBe(
      'Authorise SendGrid: add include:sendgrid.net (SPF lookups 10 → 11, over the limit of 10: flatten or manage the record)',
    )
    expect(over.change.value).toBe('include:sendgrid.net')
    expect(over.effect.description).toContain('permerror')
  })

  test('no SPF record: publish one', () => {
    const rec = run(sendgrid(), { record: null, lookups: 0, includes: [] }).find(
      (r) => r.type === 'authorize_service',
    )!
    expect(rec.title).toBe(
      'Authorise SendGrid: publish an SPF record with include:sendgrid.net (SPF lookups 0 → 1)',
    )
    expect(rec.evidence.spfRecordPublished).toBe(false)
  })

  test('an include already published (any of the service’s, any case) suppresses it', () => {
    const mailgun = source(
      '192.0.2.44',
      { messages: 1_000, spfDomains: ['example.com'] },
      { service: 'mailgun', confidence: 'medium' },
    )
    expect(run(mailgun).find((r) => r.type === 'authorize_service')!.evidence).toMatchObject({
      include: 'mailgun.org',
      otherIncludes: ['eu.mailgun.org'],
    })
    const published = { ...input().spf, includes: ['_spf.google.com', 'EU.Mailgun.org.'] }
    expect(ids(run(mailgun, published))).not.toContain('authorize_service:mailgun')
    expect(ids(run(sendgrid(), { ...input().spf, includes: ['sendgrid.net'] }))).not.toContain(
      'authorize_service:sendgrid',
    )
  })

  test('low confidence, a forwarder or a source marked unwanted gets no service recommendation', () => {
    const low = ids(run(sendgrid({}, { confidence: 'low' })))
    expect(low).not.toContain('authorize_service:sendgrid')
    expect(low).not.toContain('enable_dkim:sendgrid')
    expect(ids(run(sendgrid({}, { status: 'suspicious' })))).not.toContain('authorize_service:sendgrid')
    const list = run(
      source('192.0.2.9', { messages: 1_000, spfDomains: ['example.com'] }, { service: 'improvmx' }),
    )
    expect(list.filter((r) => r.type === 'authorize_service' || r.type === 'enable_dkim')).toEqual([])
  })

  test('a subdomain MAIL FROM takes the include in its own record; a look-alike domain does not count', () => {
    const sub = run(sendgrid({ spfDomains: ['bounce.example.com'] })).find(
      (r) => r.type === 'authorize_service',
    )!
    expect(sub.title).toBe(
      'Authorise SendGrid: add include:sendgrid.net to the SPF record of bounce.example.com',
    )
    expect(sub.change.record).toBe('bounce.example.com')
    expect(sub.evidence).toMatchObject({ lookupsBefore: null, lookupsAfter: null })
    expect(ids(run(sendgrid({ spfDomains: ['notexample.com'] })))).not.toContain('authorize_service:sendgrid')
  })

  test('a provider MAIL FROM cannot align: DKIM is recommended instead, even at a 60% DKIM rate', () => {
    const list = run(
      sendgrid({ messages: 1_000, dmarcPass: 600, dkimAligned: 600, spfDomains: ['em.sendgrid.net'] }),
    )
    expect(ids(list)).not.toContain('authorize_service:sendgrid')
    expect(byId(list, 'enable_dkim:sendgrid')!.title).toBe(
      'Enable DKIM at SendGrid (selector s1): 60.0% of its 1,000 messages are DKIM-aligned',
    )
  })
})

describe('enable_dkim', () => {
  const passingViaSpf = (dkimAligned: number) =>
    sourceRecommendations(
      input({
        sources: [
          google(9_000),
          sendgrid({ messages: 1_000, dmarcPass: 1_000, spfAligned: 1_000, spfPass: 1_000, dkimAligned }),
        ],
        spf: { ...input().spf, includes: ['_spf.google.com', 'sendgrid.net'] },
      }),
    )

  test('fires below 50% DKIM-aligned, not at 50%; DMARC passing through SPF makes it medium', () => {
    const below = byId(passingViaSpf(499), 'enable_dkim:sendgrid')!
    expect(below.priority).toBe('medium')
    expect(below.effect.messages).toBe(501)
    expect(byId(passingViaSpf(500), 'enable_dkim:sendgrid')).toBeUndefined()
  })

  test('a service without catalog selectors gets no selector or record', () => {
    const ses = source(
      '54.240.0.10',
      { messages: 2_000, spfDomains: ['amazonses.com'] },
      { service: 'amazon_ses' },
    )
    const rec = byId(
      sourceRecommendations(input({ sources: [google(8_000), ses] })),
      'enable_dkim:amazon_ses',
    )!
    expect(rec.title).toBe('Enable DKIM at Amazon SES: 0.0% of its 2,000 messages are DKIM-aligned')
    expect(rec.change).toEqual({
      kind: 'dkim_enable',
      service: 'amazon_ses',
      docs: 'https://docs.aws.amazon.com/ses/latest/dg/send-email-authentication-spf.html',
    })
  })
})
