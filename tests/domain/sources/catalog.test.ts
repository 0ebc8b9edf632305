import { describe, expect, test } from 'bun:test'
import {
  indexCatalog,
  loadCatalog,
  matchDkimDomain,
  matchNetwork,
  matchPtr,
  matchSpfInclude,
  parseCidr,
  SHIPPED_CATALOG_INDEX,
} from '../../../domain/sources/catalog.ts'
import shippedJson from '../../../domain/sources/sending-services.json' with { type: 'json' }
import { overlaps } from '../../../domain/spf/networks.ts'

const shipped = SHIPPED_CATALOG_INDEX.catalog

/** A minimal valid raw service entry, as it would be written in the JSON. */
const entry = (id: string, fields: Record<string, unknown> = {}) => ({
  id,
  name: id,
  category: 'transactional',
  docs: `https://docs.example/${id}`,
  spf_includes: [],
  ptr_suffixes: [`${id}.example`],
  dkim_domains: [],
  networks: [],
  ...fields,
})

const doc = (...services: unknown[]) => ({ version: 'test', services })

describe('the shipped catalog', () => {
  test('loads, with the version the file declares', () => {
    expect(shipped.version).toBe('2026.11.1')
    expect(shipped.version).toBe(shippedJson.version)
    expect(shipped.services.length).toBe(shippedJson.services.length)
    expect(shipped.services.length).toBeGreaterThanOrEqual(30)
  })

  test('covers the services issue #5 asks for', () => {
    const ids = new Set(shipped.services.map((s) => s.id))
    for (const id of [
      'google_workspace',
      'microsoft_365',
      'amazon_ses',
      'sendgrid',
      'mailgun',
      'mailchimp',
      'mandrill',
      'postmark',
      'sparkpost',
      'salesforce',
      'hubspot',
      'zendesk',
      'zoho_mail',
      'fastmail',
      'ovh',
      'brevo',
      'mailjet',
      'constant_contact',
      'klaviyo',
      'freshdesk',
      'intercom',
      'proofpoint',
      'mimecast',
      'barracuda',
      'yahoo',
      'icloud',
      'outlook_com',
      'google_groups',
      'zoho_campaigns',
      'socketlabs',
      'elastic_email',
      'campaign_monitor',
    ]) {
      expect(ids.has(id)).toBe(true)
    }
  })

  test('every service has an https docs URL and at least one kind of evidence', () => {
    for (const s of shipped.services) {
      expect(new URL(s.docs).protocol).toBe('https:')
      const evidence = s.spfIncludes.length + s.ptrSuffixes.length + s.dkimDomains.length + s.networks.length
      expect({ id: s.id, evidence: evidence > 0 }).toEqual({ id: s.id, evidence: true })
    }
  })

  test('ids are unique snake_case', () => {
    const ids = shipped.services.map((s) => s.id)
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of ids) expect(id).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/)
  })

  test('no include, suffix, d= domain or network is claimed by two services', () => {
    for (const field of ['spfIncludes', 'ptrSuffixes', 'dkimDomains'] as const) {
      const owners = new Map<string, string[]>()
      for (const s of shipped.services)
        for (const v of s[field]) owners.set(v, [...(owners.get(v) ?? []), s.id])
      const shared = [...owners].filter(([, ids]) => ids.length > 1)
      expect({ field, shared }).toEqual({ field, shared: [] })
    }
    const nets = shipped.services.flatMap((s) =>
      s.networks.map((cidr) => ({ id: s.id, net: parseCidr(cidr)! })),
    )
    for (const [i, a] of nets.entries()) {
      for (const b of nets.slice(i + 1)) expect(overlaps(a.net, b.net)).toBe(false)
    }
  })

  test('forwarders are flagged, and only services that forward', () => {
    const forwarders = shipped.services.filter((s) => s.forwarder).map((s) => s.id)
    expect(forwarders).toContain('google_groups')
    expect(forwarders).not.toContain('google_workspace')
    expect(forwarders).not.toContain('sendgrid')
    const groups = shipped.services.find((s) => s.id === 'google_groups')!
    expect(groups.runsOn).toBe('google_workspace')
  })
})

describe('loadCatalog rejects malformed catalogs, naming the service and field', () => {
  const rejects = (json: unknown, message: RegExp) => expect(() => loadCatalog(json)).toThrow(message)

  test('the document shape', () => {
    rejects(null, /document: must be an object/)
    rejects([], /document: must be an object/)
    rejects({ services: [] }, /document: version must be a string/)
    rejects({ version: 'x' }, /document: services must be an array/)
    rejects(doc('sendgrid'), /services\[0\]: must be an object/)
  })

  test('ids, names, categories, docs', () => {
    rejects(doc(entry('SendGrid')), /services\[0\]: id must be snake_case/)
    rejects(doc(entry('a'), entry('a')), /service "a": id is used twice/)
    rejects(doc(entry('a', { name: ' ' })), /service "a": name must be a non-empty string/)
    rejects(doc(entry('a', { category: 'esp' })), /service "a": category "esp" is not one of/)
    rejects(doc(entry('a', { docs: 'http://docs.example/a' })), /service "a": docs must be an https URL/)
    rejects(doc(entry('a', { docs: 'https://' })), /service "a": docs must be an https URL/)
  })

  test('evidence lists', () => {
    rejects(doc(entry('a', { ptr_suffixes: [] })), /service "a": needs at least one of spf_includes/)
    rejects(doc(entry('a', { dkim_domains: undefined })), /service "a": dkim_domains must be an array/)
    rejects(doc(entry('a', { spf_includes: ['_SPF.Example.com'] })), /service "a": spf_includes\[0\]/)
    rejects(doc(entry('a', { ptr_suffixes: ['example.com.'] })), /service "a": ptr_suffixes\[0\]/)
    rejects(doc(entry('a', { dkim_domains: [42] })), /service "a": dkim_domains\[0\] 42/)
    rejects(doc(entry('a', { ptr_suffixes: ['com'] })), /service "a": ptr_suffixes\[0\] "com"/)
    rejects(doc(entry('a', { dkim_selectors: ['S 1'] })), /service "a": dkim_selectors\[0\]/)
    rejects(doc(entry('a', { ptr_suffix: ['a.example'] })), /service "a": unknown field ptr_suffix/)
  })

  test('networks must be canonical CIDR', () => {
    rejects(doc(entry('a', { networks: ['192.0.2.0'] })), /service "a": networks\[0\]/)
    rejects(
      doc(entry('a', { networks: ['192.0.2.1/24'] })),
      /networks\[0\] "192.0.2.1\/24" is not a canonical/,
    )
    rejects(doc(entry('a', { networks: ['192.0.2.0/33'] })), /networks\[0\]/)
    rejects(doc(entry('a', { networks: ['2001:DB8::/32'] })), /networks\[0\]/)
    rejects(doc(entry('a', { networks: ['2001:0db8::/32'] })), /networks\[0\]/)
    expect(
      loadCatalog(doc(entry('a', { networks: ['2001:db8::/32', '192.0.2.0/24'] }))).services,
    ).toHaveLength(1)
  })

  test('a name or range claimed by two services', () => {
    rejects(
      doc(entry('a', { spf_includes: ['spf.x.example'] }), entry('b', { spf_includes: ['spf.x.example'] })),
      /service "b": spf_includes "spf.x.example" is already claimed by service "a"/,
    )
    rejects(
      doc(entry('a', { ptr_suffixes: ['x.example'] }), entry('b', { ptr_suffixes: ['x.example'] })),
      /service "b": ptr_suffixes "x.example" is already claimed by service "a"/,
    )
    rejects(
      doc(entry('a', { dkim_domains: ['x.example'] }), entry('b', { dkim_domains: ['x.example'] })),
      /service "b": dkim_domains "x.example" is already claimed by service "a"/,
    )
    rejects(
      doc(entry('a', { networks: ['192.0.2.0/24'] }), entry('b', { networks: ['192.0.2.128/25'] })),
      /service "b": network 192.0.2.128\/25 overlaps 192.0.2.0\/24 of service "a"/,
    )
  })

  test('forwarder and runs_on', () => {
    rejects(doc(entry('a', { forwarder: 'yes' })), /service "a": forwarder must be a boolean/)
    rejects(
      doc(entry('a', { category: 'forwarder' })),
      /service "a": category forwarder needs forwarder: true/,
    )
    rejects(doc(entry('a', { runs_on: 'b' })), /service "a": runs_on "b" is not another service/)
    rejects(doc(entry('a', { runs_on: 'a' })), /service "a": runs_on "a" is not another service/)
    rejects(
      doc(entry('a', { runs_on: 'b' }), entry('b', { runs_on: 'c' }), entry('c')),
      /service "a": runs_on "b", which itself runs on another/,
    )
  })
})

describe('lookups', () => {
  const idx = SHIPPED_CATALOG_INDEX
  const idOf = (match: { service: { id: string } } | null) => match?.service.id ?? null

  test('PTR suffixes match on label boundaries, case-insensitively, ignoring the trailing dot', () => {
    expect(matchPtr(idx, 'o1.outbound-mail.sendgrid.net')).toMatchObject({
      service: { id: 'sendgrid' },
      entry: 'sendgrid.net',
    })
    expect(idOf(matchPtr(idx, 'sendgrid.net'))).toBe('sendgrid')
    expect(idOf(matchPtr(idx, 'MAIL-SOR-F41.Google.COM.'))).toBe('google_workspace')
    expect(idOf(matchPtr(idx, 'evilsendgrid.net'))).toBeNull()
    expect(idOf(matchPtr(idx, 'mail.evilsendgrid.net'))).toBeNull()
    expect(idOf(matchPtr(idx, 'sendgrid.net.attacker.example'))).toBeNull()
    expect(idOf(matchPtr(idx, 'mail-db5eur03on2100.outbound.protection.outlook.com'))).toBe('microsoft_365')
    expect(idOf(matchPtr(idx, 'protection.outlook.com'))).toBeNull()
    expect(idOf(matchPtr(idx, ''))).toBeNull()
  })

  test('the most specific suffix wins', () => {
    const custom = indexCatalog(
      loadCatalog(
        doc(
          entry('broad', { ptr_suffixes: ['mail.example'] }),
          entry('narrow', { ptr_suffixes: ['out.mail.example'] }),
        ),
      ),
    )
    expect(idOf(matchPtr(custom, 'a1.out.mail.example'))).toBe('narrow')
    expect(idOf(matchPtr(custom, 'a1.in.mail.example'))).toBe('broad')
  })

  test('DKIM d= domains match on label boundaries', () => {
    expect(idOf(matchDkimDomain(idx, 'foo.sendgrid.net'))).toBe('sendgrid')
    expect(idOf(matchDkimDomain(idx, 'sendgrid.net'))).toBe('sendgrid')
    expect(idOf(matchDkimDomain(idx, 'notsendgrid.net'))).toBeNull()
    expect(idOf(matchDkimDomain(idx, 'example-com.20230601.gappssmtp.com'))).toBe('google_workspace')
    expect(idOf(matchDkimDomain(idx, 'contoso.onmicrosoft.com'))).toBe('microsoft_365')
  })

  test('SPF includes match exactly (after case and trailing-dot folding)', () => {
    expect(matchSpfInclude(idx, '_spf.google.com')).toMatchObject({ service: { id: 'google_workspace' } })
    expect(idOf(matchSpfInclude(idx, '_SPF.Google.com.'))).toBe('google_workspace')
    expect(idOf(matchSpfInclude(idx, 'spf.protection.outlook.com'))).toBe('microsoft_365')
    expect(idOf(matchSpfInclude(idx, 'x._spf.google.com'))).toBeNull()
    expect(idOf(matchSpfInclude(idx, 'google.com'))).toBeNull()
  })

  test('networks contain IPv4 and IPv6 addresses; IPv4-mapped IPv6 counts as IPv4', () => {
    expect(matchNetwork(idx, '209.85.220.41')).toMatchObject({
      service: { id: 'google_workspace' },
      entry: '209.85.128.0/17',
    })
    expect(idOf(matchNetwork(idx, '::ffff:209.85.220.41'))).toBe('google_workspace')
    expect(idOf(matchNetwork(idx, '2607:f8b0:4864:20::42c'))).toBe('google_workspace')
    expect(idOf(matchNetwork(idx, '2a01:111:f403:2c14::700'))).toBe('microsoft_365')
    expect(idOf(matchNetwork(idx, '167.89.12.34'))).toBe('sendgrid')
    expect(idOf(matchNetwork(idx, '209.85.127.255'))).toBeNull()
    expect(idOf(matchNetwork(idx, '192.0.2.1'))).toBeNull()
    expect(idOf(matchNetwork(idx, 'not an ip'))).toBeNull()
    expect(idOf(matchNetwork(idx, '2607:f8b0:5000::1'))).toBeNull()
  })

  test('the longest prefix wins across services', () => {
    // The shipped catalog forbids overlaps; an index built from services directly still picks the narrowest.
    const custom = indexCatalog({
      version: 't',
      services: [
        { ...loadCatalog(doc(entry('wide', { networks: ['10.0.0.0/8'] }))).services[0]! },
        { ...loadCatalog(doc(entry('narrow', { networks: ['10.1.0.0/16'] }))).services[0]! },
      ],
    })
    expect(idOf(matchNetwork(custom, '10.1.2.3'))).toBe('narrow')
    expect(idOf(matchNetwork(custom, '10.2.2.3'))).toBe('wide')
  })
})
