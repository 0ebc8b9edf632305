import { describe, expect, test } from 'bun:test'
import { inScope } from '../../../domain/alerts/alert.ts'
import { postureAlerts, postureScope } from '../../../domain/alerts/rules/posture.ts'
import { RSA_512_SPKI, RSA_1024_SPKI, RSA_2048_SPKI } from '../dkim/keys.ts'
import { check, REPORT_ADDRESS } from './posture-fixture.ts'

const brief = (alerts: ReturnType<typeof postureAlerts>) =>
  alerts.map((a) => `${a.type}:${a.subject}:${a.severity}`)
const alertsFor = async (...args: Parameters<typeof check>) => postureAlerts(await check(...args))

describe('a healthy domain', () => {
  test('raises nothing and every posture rule counts as evaluated', async () => {
    const result = await check()
    expect(result.posture.grade).toBe('A')
    expect(postureAlerts(result)).toEqual([])
    const scope = postureScope(result)
    expect(scope.rulesEvaluated).toHaveLength(10)
    expect(inScope(scope, 'dkim_missing', '')).toBe(true)
  })
})

describe('DMARC', () => {
  test('no record: dmarc_missing, critical, with the record to publish', async () => {
    const [alert, ...rest] = await alertsFor({ '_dmarc.example.com': null })
    expect(rest).toEqual([])
    expect(alert).toMatchObject({ type: 'dmarc_missing', subject: '', severity: 'critical' })
    expect(alert!.title).toBe('No DMARC record for example.com')
    expect(alert!.details.fix).toEqual({
      type: 'TXT',
      name: '_dmarc.example.com',
      value: `v=DMARC1; p=none; rua=mailto:${REPORT_ADDRESS}`,
      note: 'Start with p=none to collect reports, then move to quarantine and reject.',
    })
    expect(alert!.details.evidence.queried).toEqual(['_dmarc.example.com', '_dmarc.com'])
    expect(alert!.details.remedy).toContain('_dmarc.example.com')
  })

  test('two records: dmarc_invalid (critical), not dmarc_missing', async () => {
    const alerts = await alertsFor({
      '_dmarc.example.com': ['v=DMARC1; p=reject', 'v=DMARC1; p=none'],
    })
    expect(brief(alerts)).toEqual(['dmarc_invalid::critical'])
    // The starter p=none record would weaken whichever record was meant: no fix offered.
    expect(alerts[0]!.details.fix).toBeUndefined()
    expect(alerts[0]!.details.evidence.problems).toContainEqual(
      expect.objectContaining({ code: 'dmarc.multiple_records' }),
    )
  })

  test('an invalid p with a usable rua: dmarc_invalid at the posture severity (read as p=none)', async () => {
    const alerts = await alertsFor({
      '_dmarc.example.com': `v=DMARC1; p=rejekt; rua=mailto:${REPORT_ADDRESS}`,
    })
    expect(brief(alerts)).toEqual(['dmarc_invalid::medium'])
    expect(alerts[0]!.title).toBe('The DMARC record of example.com has an error')
    expect(alerts[0]!.details.evidence.problems).toEqual([
      expect.objectContaining({ code: 'dmarc.invalid_policy' }),
    ])
  })

  test('near miss: an invalid flag that falls back to its default is a posture issue, not an alert', async () => {
    const alerts = await alertsFor({
      '_dmarc.example.com': `v=DMARC1; p=reject; adkim=x; rua=mailto:${REPORT_ADDRESS}`,
    })
    expect(alerts).toEqual([])
  })

  test('a DNS failure raises nothing and leaves the DMARC alerts out of scope', async () => {
    const result = await check({ '_dmarc.example.com': { status: 'timeout' } })
    expect(postureAlerts(result)).toEqual([])
    const scope = postureScope(result)
    expect(scope.rulesEvaluated).not.toContain('dmarc_missing')
    expect(scope.rulesEvaluated).not.toContain('dmarc_invalid')
    expect(scope.rulesEvaluated).toContain('spf_missing')
  })
})

describe('SPF', () => {
  test('no record: spf_missing (high) with a starter record', async () => {
    const alerts = await alertsFor({ 'example.com': null })
    expect(brief(alerts)).toEqual(['spf_missing::high'])
    expect(alerts[0]!.details.fix).toMatchObject({ name: 'example.com', value: 'v=spf1 mx ~all' })
  })

  test('an include that does not exist: spf_permerror with the term', async () => {
    const alerts = await alertsFor({
      'example.com': 'v=spf1 include:_spf.example.net include:gone.example.org -all',
    })
    expect(brief(alerts)).toEqual(['spf_permerror::high'])
    expect(alerts[0]!.details.evidence.problems).toEqual([
      expect.objectContaining({
        code: 'include_not_found',
        domain: 'example.com',
        term: 'include:gone.example.org',
      }),
    ])
  })

  test('a syntax error is a critical permerror', async () => {
    const alerts = await alertsFor({ 'example.com': 'v=spf1 ip4:192.0.2.300 -all' })
    expect(brief(alerts)).toEqual(['spf_permerror::critical'])
  })

  const includes = (n: number) => {
    const records: Record<string, string> = {}
    const terms: string[] = []
    for (let i = 1; i <= n; i++) {
      records[`i${i}.example.net`] = `v=spf1 ip4:198.51.100.${i} -all`
      terms.push(`include:i${i}.example.net`)
    }
    return { ...records, 'example.com': `v=spf1 ${terms.join(' ')} -all` }
  }

  test('11 DNS-querying terms: spf_too_many_lookups with the counts and a flattened fix', async () => {
    const alerts = await alertsFor(includes(11))
    expect(brief(alerts)).toEqual(['spf_too_many_lookups::high'])
    expect(alerts[0]!.title).toBe('The SPF record of example.com needs 11 DNS lookups (limit 10)')
    expect(alerts[0]!.details.evidence).toMatchObject({ lookups: 11, limit: 10 })
    expect(alerts[0]!.details.fix?.name).toBe('example.com')
  })

  test('near miss: exactly 10 lookups is within RFC 7208 §4.6.4', async () => {
    expect(await alertsFor(includes(10))).toEqual([])
  })

  test('an include loop is one permerror, not also a lookup-limit alert', async () => {
    const alerts = await alertsFor({
      'example.com': 'v=spf1 include:loop.example.net -all',
      'loop.example.net': 'v=spf1 include:example.com -all',
    })
    expect(brief(alerts)).toEqual(['spf_permerror::critical'])
  })

  test('3 void lookups: spf_void_lookups; 2 are within the limit', async () => {
    const three = await alertsFor({
      'example.com': 'v=spf1 a:gone1.example.com a:gone2.example.com a:gone3.example.com -all',
    })
    expect(brief(three)).toEqual(['spf_void_lookups::high'])
    expect(three[0]!.details.evidence).toMatchObject({ voidLookups: 3, limit: 2 })
    expect(three[0]!.details.evidence.terms).toHaveLength(3)
    const two = await alertsFor({ 'example.com': 'v=spf1 a:gone1.example.com a:gone2.example.com -all' })
    expect(two).toEqual([])
  })

  test('+all is critical, ?all medium, ~all nothing', async () => {
    const pass = await alertsFor({ 'example.com': 'v=spf1 include:_spf.example.net +all' })
    expect(brief(pass)).toEqual(['spf_permissive_all::critical'])
    expect(pass[0]!.details.fix?.value).toBe('v=spf1 include:_spf.example.net ~all')
    const neutral = await alertsFor({ 'example.com': 'v=spf1 include:_spf.example.net ?all' })
    expect(brief(neutral)).toEqual(['spf_permissive_all::medium'])
    expect(await alertsFor({ 'example.com': 'v=spf1 include:_spf.example.net ~all' })).toEqual([])
  })

  test('a DNS failure anywhere in the tree leaves the SPF alerts out of scope', async () => {
    const result = await check({ '_spf.example.net': { status: 'error', reason: 'SERVFAIL' } })
    expect(postureScope(result).rulesEvaluated).not.toContain('spf_permerror')
    expect(postureScope(result).rulesEvaluated).toContain('dmarc_missing')
  })
})

describe('DKIM', () => {
  const key = (p: string, extra = '') => `v=DKIM1; k=rsa;${extra} p=${p}`

  test('a revoked key at a configured selector: dkim_selector_revoked (high) for that selector', async () => {
    const alerts = await alertsFor(
      { 's1._domainkey.example.com': 'v=DKIM1; k=rsa; p=' },
      { configured: ['s1'] },
    )
    expect(brief(alerts)).toEqual(['dkim_selector_revoked:s1:high'])
    expect(alerts[0]!.details.evidence).toMatchObject({ selector: 's1', origin: 'configured' })
  })

  test('near miss: a revoked key at a guessed selector is a retired key, no alert', async () => {
    expect(await alertsFor({ 's1._domainkey.example.com': 'v=DKIM1; k=rsa; p=' })).toEqual([])
  })

  test('1024 bits: dkim_weak_key medium; 512 bits critical; 2048 nothing', async () => {
    const medium = await alertsFor({ 'google._domainkey.example.com': key(RSA_1024_SPKI) })
    expect(brief(medium)).toEqual(['dkim_weak_key:google:medium'])
    expect(medium[0]!.title).toBe('The DKIM key google of example.com has only 1024 bits')
    expect(medium[0]!.details.evidence).toMatchObject({ bits: 1024, keyType: 'rsa' })
    const critical = await alertsFor({ 'google._domainkey.example.com': key(RSA_512_SPKI) })
    expect(brief(critical)).toContain('dkim_weak_key:google:critical')
    expect(await alertsFor({ 'google._domainkey.example.com': key(RSA_2048_SPKI) })).toEqual([])
  })

  test('h=sha1 only is a weak key (RFC 8301 §3.1)', async () => {
    const alerts = await alertsFor({ 'google._domainkey.example.com': key(RSA_2048_SPKI, ' h=sha1;') })
    expect(brief(alerts)).toEqual(['dkim_weak_key:google:high'])
    expect(alerts[0]!.title).toBe('The DKIM key google of example.com allows only SHA-1')
  })

  test('a configured selector without a key: dkim_missing for that selector', async () => {
    const alerts = await alertsFor({}, { configured: ['mailer'] })
    expect(brief(alerts)).toEqual(['dkim_missing:mailer:high'])
    expect(alerts[0]!.details.evidence).toEqual({
      selector: 'mailer',
      name: 'mailer._domainkey.example.com',
      origin: 'configured',
    })
  })

  test('no key anywhere: dkim_missing for the domain', async () => {
    const alerts = await alertsFor({ 'google._domainkey.example.com': null })
    expect(brief(alerts)).toEqual(['dkim_missing::high'])
  })

  test('a wildcard zone: weak keys at guessed selectors are the wildcard answering, not alerts', async () => {
    const alerts = await alertsFor({
      '*._domainkey.example.com': key(RSA_1024_SPKI),
      'google._domainkey.example.com': null,
    })
    expect(alerts).toEqual([])
    const configured = await alertsFor(
      { '*._domainkey.example.com': key(RSA_1024_SPKI), 'google._domainkey.example.com': null },
      { configured: ['mine'] },
    )
    expect(brief(configured)).toEqual(['dkim_weak_key:mine:medium'])
  })

  test('a failed lookup leaves that selector (and the domain-wide dkim_missing) out of scope', async () => {
    const result = await check(
      { 'google._domainkey.example.com': { status: 'timeout' } },
      { configured: ['google'] },
    )
    expect(postureAlerts(result)).toEqual([])
    const scope = postureScope(result)
    expect(inScope(scope, 'dkim_weak_key', 'google')).toBe(false)
    expect(inScope(scope, 'dkim_missing', '')).toBe(false)
    expect(inScope(scope, 'dkim_weak_key', 's1')).toBe(true)
  })
})
