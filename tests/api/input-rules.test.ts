import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { listenOnLoopback, startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// The input rules of docs/api.md ("Input rules") on the requests that broke them before (issue #16):
// out-of-range numbers, NUL, prototype-named keys and the IPv4 format each answered 500, and a
// prototype key in a failing query made the error mapping itself throw into Bun's HTML error page.
// tests/api/input-sweep.test.ts sweeps every operation; these name the cases.

let t: TestApp
let owner: TestAccount
let base: string
let stop: () => void

beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_API_PER_MINUTE: '100000' })
  owner = await t.account()
  const created = await t.request('POST', '/api/v1/domains', {
    token: owner.token,
    body: { domain_name: 'rules.example' },
  })
  expect(created.status).toBe(201)
  ;({ base, stop } = listenOnLoopback(t.app))
}, 60_000)
afterAll(async () => {
  stop?.()
  await t?.close()
})

/** Over a real server, so Bun's own error handling is part of what is tested. */
async function call(method: string, path: string, body?: string) {
  const headers: Record<string, string> = { authorization: `Bearer ${owner.token}` }
  if (body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(`${base}${path}`, { method, headers, body })
  const text = await response.text()
  expect(response.headers.get('content-type')).toStartWith('application/json')
  expect(text).not.toMatch(/<html|\.ts:\d+|node_modules|"stack"/i)
  return { status: response.status, body: JSON.parse(text) }
}

const expectField = async (method: string, path: string, field: string, body?: string) => {
  const res = await call(method, path, body)
  expect({ status: res.status, fields: Object.keys(res.body.errors ?? {}) }).toEqual({
    status: 400,
    fields: [field],
  })
  return res.body as { message: string; errors: Record<string, string[]> }
}

describe('integers are bounded in their schemas', () => {
  test.each([
    ['GET', '/api/v1/domains?page=99999999999999999999', 'page'],
    ['GET', '/api/v1/domains?page=1000001', 'page'],
    ['GET', '/api/v1/domains?organization_id=1e%2B308', 'organization_id'],
    ['GET', '/api/v1/domains?organization_id=2147483648', 'organization_id'],
    ['GET', '/api/v1/organizations/9223372036854775808/domains', 'group'],
    ['GET', '/api/v1/dmarc-reports/forensic/reports/9223372036854775808', 'id'],
    ['GET', '/api/v1/domains/rules.example/reports/18446744073709551616', 'id'],
  ])('%s %s is a 400 on %s', async (method, path, field) => {
    const body = await expectField(method, path, field)
    expect(body.errors[field]![0]).toMatch(/must be a whole number from 1 to \d+/)
  })

  test.each([
    ['/api/v1/domains/rules.example/spf/rollback', '{"version": 1e308}', 'version'],
    ['/api/v1/domains/rules.example/spf/rollback', '{"version": "9223372036854775808"}', 'version'],
    [
      '/api/v1/domains',
      '{"domain_name": "a.example", "organization_id": 9223372036854775808}',
      'organization_id',
    ],
  ])('POST %s %s is a 400 on %s', async (path, body, field) => {
    await expectField('POST', path, field, body)
  })
})

// Found by a hostile-input sweep: Elysia coerces with Number(), which read white space, hex,
// octal and binary, and rounded a long fraction to a whole number (plugins/input-rules.ts).
describe('numbers in a query or a path are written in decimal digits', () => {
  test.each([
    ['/api/v1/domains?page=%0A1', 'page'],
    ['/api/v1/domains?page=1%09', 'page'],
    ['/api/v1/domains?page=%201', 'page'],
    ['/api/v1/domains?page=0x10', 'page'],
    ['/api/v1/domains?page=0b1', 'page'],
    ['/api/v1/domains?page=1.0000000000000001', 'page'],
    ['/api/v1/organizations/%0B1/domains', 'group'],
    ['/api/v1/organizations/0x10/domains', 'group'],
    ['/api/v1/domains/rules.example/reports/0o7', 'id'],
    ['/api/v1/domains/rules.example/reports/%0A7', 'id'],
  ])('GET %s is a 400 on %s', async (path, field) => {
    const body = await expectField('GET', path, field)
    expect(body.errors[field]![0]).toMatch(/decimal digits|whole number|control characters/)
  })

  test('a query value or a path segment that is not UTF-8 is a 400 on it', async () => {
    await expectField('GET', '/api/v1/domains/%ff', 'name')
    await expectField('GET', '/api/v1/domains?q=%ff', 'q')
    await expectField('GET', '/api/v1/domains?q=%ed%a0%80', 'q')
    expect((await call('GET', '/api/v1/domains?q=%C3%A9')).status).toBe(200)
  })

  test('plain numbers still pass', async () => {
    expect((await call('GET', '/api/v1/domains?page=1')).status).toBe(200)
    expect((await call('GET', '/api/v1/domains?page=2&per_page=10')).status).toBe(200)
    expect((await call('GET', '/api/v1/domains/rules.example/reports/7')).status).toBe(404)
  })
})

describe('control characters are refused in text', () => {
  test('NUL in an organization name is a 400 on name (PostgreSQL refuses NUL in text)', async () => {
    const body = await expectField(
      'POST',
      '/api/v1/organizations',
      'name',
      JSON.stringify({ name: 'a\u0000b' }),
    )
    expect(body.errors.name).toEqual(['The name field must not contain control characters.'])
  })

  test('a line break in a single-line field is a 400 on it', async () => {
    const body = await expectField('POST', '/api/v1/organizations', 'name', JSON.stringify({ name: 'a\nb' }))
    expect(body.errors.name).toEqual(['The name field must not contain control characters.'])
  })

  test.each([
    ['/api/v1/domains/rules%00.example', 'name'],
    ['/api/v1/domains/rules.example/sources?q=a%1Bb', 'q'],
    ['/api/v1/alerts?domain=a%7Fb', 'domain'],
  ])('%s is a 400 on %s', async (path, field) => {
    await expectField('GET', path, field)
  })

  test('a lone surrogate is refused (it would be stored as U+FFFD)', async () => {
    const body = await expectField('POST', '/api/v1/organizations', 'name', '{"name": "a\\ud800b"}')
    expect(body.errors.name).toEqual(['The name field must be well-formed Unicode text.'])
  })

  test('in a field the schema does not know, and in a key', async () => {
    await expectField(
      'POST',
      '/api/v1/organizations',
      'extra',
      JSON.stringify({ name: 'ok', extra: 'a\u0001' }),
    )
    await expectField(
      'POST',
      '/api/v1/organizations',
      'a\\u0000',
      JSON.stringify({ name: 'ok', 'a\u0000': 1 }),
    )
  })
})

describe('prototype-named keys', () => {
  test.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])(
    'as a query key beside a failing field: %s',
    async (key) => {
      // The failing per_page is reported; before, naming the field by its value found `key` first
      // and the error mapping threw on `errors[key]`, which Bun answered with its HTML stack page.
      const res = await call('GET', `/api/v1/domains?${key}=500&per_page=500`)
      expect(res.status).toBe(400)
      expect(res.body.errors).toBeObject()
    },
  )

  test.each(['__proto__', 'constructor', 'toString'])('as a query key: %s', async (key) => {
    await expectField('GET', `/api/v1/domains?${key}=1`, key)
  })

  test.each(['__proto__', 'constructor', 'toString'])('as a body key, also nested: %s', async (key) => {
    await expectField('POST', '/api/v1/organizations', key, `{"name": "x", "${key}": {"polluted": true}}`)
    await expectField(
      'PATCH',
      '/api/v1/domains/rules.example',
      `dkim_selectors.${key}`,
      `{"dkim_selectors": {"${key}": 1}}`,
    )
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })
})

describe('other rules', () => {
  test('a query key given twice is a 400 on it', async () => {
    await expectField('GET', '/api/v1/domains?page=1&page=2', 'page')
  })

  test('JSON nested deeper than 32 levels is a 400 on body', async () => {
    const body = await expectField(
      'POST',
      '/api/v1/organizations',
      'body',
      `{"a": ${'['.repeat(40)}${']'.repeat(40)}}`,
    )
    expect(body.message).toBe('The body is nested too deeply (at most 32 levels).')
  })

  test('a timestamp past the year 9999 is a 400, not a database error', async () => {
    await expectField('GET', '/api/v1/dmarc-reports/forensic/reports?since=99999', 'since')
    await expectField(
      'GET',
      '/api/v1/dmarc-reports/forensic/reports?until=%2B275760-09-13T00:00:00Z',
      'until',
    )
  })

  test('the ipv4 format works: a valid source_ip filters, an invalid one is a 400', async () => {
    const found = await call('GET', '/api/v1/dmarc-reports/forensic/reports?source_ip=11.1.2.3')
    expect(found.status).toBe(200)
    expect(found.body.data).toEqual([])
    await expectField('GET', '/api/v1/dmarc-reports/forensic/reports?source_ip=300.1.2.3', 'source_ip')
  })
})

// Found by a hostile-input sweep (tests/api/input-rules.test.ts above names the earlier ones).
describe('lists say how many items they take', () => {
  const many = (count: number, item: (i: number) => string) =>
    Array.from({ length: count }, (_, i) => item(i))

  test.each([
    [
      'dkim_selectors ×21',
      'POST',
      '/api/v1/domains',
      { domain_name: 'lists.example', dkim_selectors: many(21, (i) => `s${i}`) },
      'dkim_selectors',
      'The dkim_selectors field may have at most 20 items.',
    ],
    [
      'recipients ×21',
      'PUT',
      '/api/v1/notifications',
      { digest: { frequency: 'weekly', recipients: many(21, (i) => `u${i}@example.com`), time_zone: 'UTC' } },
      'digest.recipients',
      'The digest.recipients field may have at most 20 items.',
    ],
    [
      'zones ×1000',
      'POST',
      '/api/v1/dns-providers/powerdns/import-domains',
      { zones: many(1000, (i) => `z${i}.example`) },
      'zones',
      'The zones field may have at most 500 items.',
    ],
    [
      'zones ×0',
      'POST',
      '/api/v1/dns-providers/powerdns/import-domains',
      { zones: [] },
      'zones',
      'The zones field must not be empty.',
    ],
    [
      'values ×1000',
      'POST',
      '/api/v1/dns-providers/writes',
      { domain: 'rules.example', name: 'rules.example', type: 'TXT', values: many(1000, (i) => `v${i}`) },
      'values',
      'The values field may have at most 100 items.',
    ],
  ] as const)('%s: %s %s', async (_, method, path, body, field, message) => {
    const answer = await expectField(method, path, field, JSON.stringify(body))
    expect(answer.errors[field]).toEqual([message])
  })
})

// Elysia's t.Integer takes text that Number() reads as a whole number: `"0x1"` and `" 1 "` were
// organization 1 (the query and path rules already refused them: findLooseNumbers).
describe('integers in a JSON body are JSON numbers or decimal digits', () => {
  let organizationId: number
  beforeAll(async () => {
    organizationId = (await call('POST', '/api/v1/organizations', JSON.stringify({ name: 'Numbers' }))).body
      .data.id
  })

  test.each(['"0x1"', '" 1 "', '"1.0"', '"1e0"', '"+1"', '"0b1"', '"1_0"', '""', 'true', '1.5'])(
    'organization_id %s is a 400 on it',
    async (literal) => {
      const answer = await expectField(
        'POST',
        '/api/v1/domains',
        'organization_id',
        `{"domain_name": "numbers.example", "organization_id": ${literal.replace('1', String(organizationId))}}`,
      )
      expect(answer.errors.organization_id).toEqual([
        'The organization_id field must be a whole number from 1 to 2147483647.',
      ])
    },
  )

  test('a JSON number, also written 1.0 or 1e0, and text of decimal digits are the organization', async () => {
    const literals = [
      String(organizationId),
      `${organizationId}.0`,
      `${organizationId}e0`,
      `"${organizationId}"`,
    ]
    for (const [i, literal] of literals.entries()) {
      const res = await call(
        'POST',
        '/api/v1/domains',
        `{"domain_name": "n${i}.numbers.example", "organization_id": ${literal}}`,
      )
      expect({ literal, status: res.status, id: res.body.data?.organization_id }).toEqual({
        literal,
        status: 201,
        id: organizationId,
      })
    }
  })
})

describe('single-line names', () => {
  test.each(['202A', '202B', '202C', '202D', '202E', '2066', '2067', '2068', '2069'])(
    'bidirectional control U+%s is a 400 on the field',
    async (code) => {
      const answer = await expectField(
        'POST',
        '/api/v1/organizations',
        'name',
        JSON.stringify({ name: `Invoice ${String.fromCodePoint(Number.parseInt(code, 16))}fdp.exe` }),
      )
      expect(answer.errors.name).toEqual([
        'The name field must not contain bidirectional control characters (U+202A–U+202E, U+2066–U+2069).',
      ])
    },
  )

  test('in any single-line field, a DKIM selector in a list too', async () => {
    await expectField(
      'POST',
      '/api/v1/domains',
      'dkim_selectors.0',
      JSON.stringify({ domain_name: 'bidi.example', dkim_selectors: ['s\u202e1'] }),
    )
  })

  test('the NFC and NFD spellings of a name are one organization, stored in NFC', async () => {
    const nfc = await call('POST', '/api/v1/organizations', JSON.stringify({ name: 'Caf\u00e9 Rules' }))
    expect(nfc.status).toBe(201)
    expect(nfc.body.data.name).toBe('Caf\u00e9 Rules')
    const nfd = await call('POST', '/api/v1/organizations', JSON.stringify({ name: 'Cafe\u0301 Rules' }))
    expect(nfd.status).toBe(400)
    expect(nfd.body.errors).toEqual({ name: ['An organization named "Caf\u00e9 Rules" already exists.'] })
    const other = await call('POST', '/api/v1/organizations', JSON.stringify({ name: 'Cafe\u0301 Other' }))
    expect(other.status).toBe(201)
    expect(other.body.data.name).toBe('Caf\u00e9 Other')
    const renamed = await call(
      'PATCH',
      `/api/v1/organizations/${other.body.data.id}`,
      JSON.stringify({ name: 'CAFE\u0301 RULES' }),
    )
    expect(renamed.status).toBe(400)
    expect(renamed.body.errors.name).toEqual(['An organization named "CAF\u00c9 RULES" already exists.'])
  })
})
