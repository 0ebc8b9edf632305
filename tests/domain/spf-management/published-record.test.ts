import { describe, expect, test } from 'bun:test'
import type { ManagedSpfConfig } from '../../../domain/spf-management/managed-record.ts'
import type { SourceActivity } from '../../../domain/spf-management/ports.ts'
import {
  defaultAll,
  defaultSources,
  outsideLookups,
  recordToPublish,
  recordWithSource,
} from '../../../domain/spf-management/published-record.ts'
import { chooseSource, proposeSources } from '../../../domain/spf-management/source-detection.ts'
import { sourceTerm } from '../../../domain/spf-management/sources.ts'

// The user's own record around the hosted one (what activation copies, what they publish after,
// one term added to an unmanaged record) and the sources proposed from report figures.

const ZONE = 'spf.dmarcwatch.test'
const HOSTED = `shop-example.${ZONE}`
const terms = (record: string) => defaultSources(record, 'shop.example', ZONE).map(sourceTerm)

describe('defaultSources', () => {
  test('the + terms of a kind a source can be, in order; bare a/mx name the domain', () => {
    expect(
      terms('v=spf1 a mx:mail.shop.example ip4:192.0.2.7/24 ip6:2001:DB8::1 include:_spf.Google.com ~all'),
    ).toEqual([
      'a:shop.example',
      'mx:mail.shop.example',
      'ip4:192.0.2.0/24',
      'ip6:2001:db8::1',
      'include:_spf.google.com',
    ])
  })

  test('macros, dual-cidr, ptr and exists stay; nothing moves past a non-+ directive', () => {
    expect(
      terms(
        'v=spf1 include:%{i}.x.example a/24 ptr exists:e.example include:a.example -ip4:192.0.2.9 include:b.example -all',
      ),
    ).toEqual(['include:a.example'])
  })

  test('no record, a broken record, the hosted include itself: nothing', () => {
    expect(terms('')).toEqual([])
    expect(defaultSources(null, 'shop.example', ZONE)).toEqual([])
    expect(terms('v=spf1 include: -all')).toEqual([])
    expect(terms(`v=spf1 include:${HOSTED} -all`)).toEqual([])
  })

  test('defaultAll keeps a softfail, anything else is -all', () => {
    expect(defaultAll('v=spf1 mx ~all')).toBe('~all')
    expect(defaultAll('v=spf1 mx ?all')).toBe('-all')
    expect(defaultAll(null)).toBe('-all')
  })
})

describe('recordToPublish', () => {
  const config = (record: string): ManagedSpfConfig => ({
    sources: defaultSources(record, 'shop.example', ZONE),
    all: '-all',
    flatten: 'auto',
  })
  const publish = (record: string | null, cfg: ManagedSpfConfig) =>
    recordToPublish(record, { hosted: HOSTED, config: cfg, domain: 'shop.example', zone: ZONE })

  test('the terms the hosted record holds are replaced by its include', () => {
    const record = 'v=spf1 a include:_spf.google.com ~all'
    const user = publish(record, config(record))
    expect(user).toMatchObject({ record: `v=spf1 include:${HOSTED} ~all`, changed: true, lookups: 1 })
    expect(outsideLookups(user)).toBe(0)
  })

  test('terms the hosted record does not hold stay, and cost lookups outside it', () => {
    const record = 'v=spf1 include:_spf.google.com exists:%{i}.x.example redirect=other.example'
    const user = publish(record, config('v=spf1 include:_spf.google.com -all'))
    expect(user.record).toBe(`v=spf1 exists:%{i}.x.example include:${HOSTED} redirect=other.example`)
    expect(outsideLookups(user)).toBe(2)
  })

  test('already published: unchanged', () => {
    const record = `v=spf1 include:${HOSTED} -all`
    expect(publish(record, config('v=spf1 mx -all'))).toMatchObject({ record, changed: false })
  })

  test('nothing published: a new record with the include', () => {
    expect(publish(null, config('')).record).toBe(`v=spf1 include:${HOSTED} -all`)
  })
})

describe('recordWithSource (unmanaged domains)', () => {
  test('before the all, once', () => {
    const added = recordWithSource('v=spf1 mx -all', { kind: 'include', domain: 'sendgrid.net' })
    expect(added).toMatchObject({ record: 'v=spf1 mx include:sendgrid.net -all', changed: true, lookups: 2 })
    const again = recordWithSource(added.record, { kind: 'include', domain: 'SendGrid.net.' })
    expect(again).toMatchObject({ record: added.record, changed: false })
    expect(
      recordWithSource('v=spf1 ip4:192.0.2.0/24 -all', { kind: 'ip4', network: '192.0.2.7/24' }).changed,
    ).toBe(false)
  })

  test('without an all: after the last mechanism, before a redirect', () => {
    expect(
      recordWithSource('v=spf1 mx redirect=x.example', { kind: 'ip4', network: '192.0.2.1' }).record,
    ).toBe('v=spf1 mx ip4:192.0.2.1 redirect=x.example')
  })

  test('no record: a new one ending in ~all', () => {
    expect(recordWithSource(null, { kind: 'ip4', network: '192.0.2.1' })).toMatchObject({
      record: 'v=spf1 ip4:192.0.2.1 ~all',
      changed: true,
      lookups: 0,
    })
  })
})

describe('sources from report figures', () => {
  const activity = (over: Partial<SourceActivity>): SourceActivity => ({
    ip: '192.0.2.1',
    messages: 10,
    spfAligned: 0,
    dmarcPass: 10,
    ptr: null,
    dkimDomains: [],
    override: null,
    ...over,
  })

  test("a catalog service's include; an unknown sender's address", () => {
    expect(chooseSource(activity({ ip: '149.72.3.4' }), 'shop.example')).toMatchObject({
      source: { kind: 'include', domain: 'sendgrid.net', serviceId: 'sendgrid' },
      service: { id: 'sendgrid' },
    })
    expect(chooseSource(activity({ ip: '::ffff:192.0.2.1' }), 'shop.example')!.source).toEqual({
      kind: 'ip4',
      network: '192.0.2.1',
    })
  })

  test('proposals: legitimate-looking senders failing SPF alignment, one per term', () => {
    const proposals = proposeSources(
      [
        activity({ ip: '149.72.3.4', messages: 30, dmarcPass: 30 }),
        activity({ ip: '149.72.3.5', messages: 20, dmarcPass: 20, spfAligned: 5 }),
        // Aligned already, no aligned mail at all, marked unwanted, a forwarder, the user's verdict.
        activity({ ip: '167.89.0.1', spfAligned: 10 }),
        activity({ ip: '192.0.2.50', dmarcPass: 0 }),
        activity({ ip: '192.0.2.51', override: 'unwanted' }),
        activity({ ip: '192.0.2.52', ptr: 'mx.forwardemail.net' }),
        activity({ ip: '192.0.2.53', dmarcPass: 0, override: 'legitimate' }),
      ],
      'shop.example',
      new Set(),
    )
    expect(proposals.map((p) => [sourceTerm(p.source), p.ips, p.messages, p.spfFailing])).toEqual([
      ['include:sendgrid.net', ['149.72.3.4', '149.72.3.5'], 50, 45],
      ['ip4:192.0.2.53', ['192.0.2.53'], 10, 10],
    ])
    expect(
      proposeSources([activity({ ip: '149.72.3.4' })], 'shop.example', new Set(['include:sendgrid.net'])),
    ).toEqual([])
  })
})
