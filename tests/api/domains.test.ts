import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

let t: TestApp
let owner: TestAccount

beforeAll(async () => {
  t = await startTestApp()
  owner = await t.account()
}, 60_000)
afterAll(() => t.close())

describe('POST /api/v1/domains', () => {
  test('creates a domain with defaults and the documented fields', async () => {
    const res = await t.request('POST', '/api/v1/domains', {
      token: owner.token,
      body: { domain_name: 'Example.COM.' },
    })
    expect(res.status).toBe(201)
    const domain = res.body.data
    expect(domain.name).toBe('example.com')
    expect(domain.automation_level).toBe('manual')
    expect(domain.organization_id).toBeNull()
    expect(domain.verified).toBe(false)
    expect(domain.verification.txt_name).toBe('_dmarcwatch.example.com')
    expect(domain.verification.txt_value).toMatch(/^dmarcwatch-verify=[a-z2-7]{32}$/)
    expect(domain.status).toMatchObject({
      dmarc: 'unknown',
      spf: 'unknown',
      dkim: 'unknown',
      automation: 'manual',
    })
    expect(Date.parse(domain.created_at)).not.toBeNaN()
  })

  test('converts unicode names to A-labels', async () => {
    const res = await t.request('POST', '/api/v1/domains', {
      token: owner.token,
      body: { domain_name: 'Bücher.de', automation_level: 'assisted' },
    })
    expect(res.status).toBe(201)
    expect(res.body.data.name).toBe('xn--bcher-kva.de')
    expect(res.body.data.automation_level).toBe('assisted')
    const found = await t.request('GET', '/api/v1/domains/B%C3%BCcher.de', { token: owner.token })
    expect(found.status).toBe(200)
    expect(found.body.data.name).toBe('xn--bcher-kva.de')
  })

  test('accepts names under the reserved .test and .example TLDs', async () => {
    for (const name of ['mail.test', 'shop.example']) {
      const res = await t.request('POST', '/api/v1/domains', {
        token: owner.token,
        body: { domain_name: name },
      })
      expect(res.status).toBe(201)
    }
  })

  test('a duplicate in the same account is a validation error on domain_name', async () => {
    const res = await t.request('POST', '/api/v1/domains', {
      token: owner.token,
      body: { domain_name: 'EXAMPLE.com' },
    })
    expect(res.status).toBe(400)
    expect(Object.keys(res.body.errors)).toEqual(['domain_name'])
    expect(res.body.errors.domain_name[0]).toContain('already')
  })

  test('the same name may exist in another account', async () => {
    const other = await t.account()
    const res = await t.request('POST', '/api/v1/domains', {
      token: other.token,
      body: { domain_name: 'example.com' },
    })
    expect(res.status).toBe(201)
  })

  test.each([
    ['co.uk', 'public suffix'],
    ['localhost', 'two labels'],
    ['192.0.2.1', 'IP address'],
    ['https://example.com/x', 'bare domain'],
    ['exa mple.com', 'bare domain'],
    ['-bad.com', 'label'],
    ['foo.notatld', 'top-level domain'],
    ['', 'required'],
  ])('rejects %p', async (name, fragment) => {
    const res = await t.request('POST', '/api/v1/domains', {
      token: owner.token,
      body: { domain_name: name },
    })
    expect(res.status).toBe(400)
    expect(res.body.message).toBeString()
    expect(res.body.errors.domain_name.join(' ')).toContain(fragment)
  })

  test('wrong types and unknown enum values name the field', async () => {
    const res = await t.request('POST', '/api/v1/domains', {
      token: owner.token,
      body: { domain_name: 42, automation_level: 'yolo', extra: 'ignored' },
    })
    expect(res.status).toBe(400)
    expect(res.body.errors.domain_name).toEqual(['The domain_name field must be a string.'])
    expect(res.body.errors.automation_level).toEqual([
      'The automation_level field must be one of: manual, assisted, automatic.',
    ])
    expect(res.body.errors.extra).toBeUndefined()
  })

  test('a missing body field is required', async () => {
    const res = await t.request('POST', '/api/v1/domains', { token: owner.token, body: {} })
    expect(res.status).toBe(400)
    expect(res.body.errors).toEqual({ domain_name: ['The domain_name field is required.'] })
  })
})

describe('GET /api/v1/domains', () => {
  test('lists only the caller’s domains with the pagination meta', async () => {
    const res = await t.request('GET', '/api/v1/domains?per_page=2', { token: owner.token })
    expect(res.status).toBe(200)
    expect(res.body.meta).toEqual({ total: 4, page: 1, per_page: 2, last_page: 2 })
    expect(res.body.data.map((d: { name: string }) => d.name)).toEqual(['example.com', 'mail.test'])
    const second = await t.request('GET', '/api/v1/domains?per_page=2&page=2', { token: owner.token })
    expect(second.body.data.map((d: { name: string }) => d.name)).toEqual([
      'shop.example',
      'xn--bcher-kva.de',
    ])
  })

  test('a page past the last answers an empty page with the same meta', async () => {
    const res = await t.request('GET', '/api/v1/domains?per_page=2&page=9', { token: owner.token })
    expect(res.status).toBe(200)
    expect(res.body.data).toEqual([])
    expect(res.body.meta).toEqual({ total: 4, page: 9, per_page: 2, last_page: 2 })
  })

  test.each([
    ['per_page=101', 'per_page'],
    ['per_page=0', 'per_page'],
    ['page=0', 'page'],
    ['page=abc', 'page'],
    ['page=1.5', 'page'],
  ])('out-of-range pagination %p is a validation error, never a clamp', async (query, field) => {
    const res = await t.request('GET', `/api/v1/domains?${query}`, { token: owner.token })
    expect(res.status).toBe(400)
    expect(Object.keys(res.body.errors)).toEqual([field])
  })
})

describe('GET /api/v1/domains/{name}', () => {
  test('a domain of another account is 403 domain_not_found, same as a missing one', async () => {
    const other = await t.account()
    await t.request('POST', '/api/v1/domains', { token: other.token, body: { domain_name: 'secret.org' } })
    const theirs = await t.request('GET', '/api/v1/domains/secret.org', { token: owner.token })
    const nowhere = await t.request('GET', '/api/v1/domains/never-registered.org', { token: owner.token })
    const unusable = await t.request('GET', '/api/v1/domains/exa%20mple.com', { token: owner.token })
    for (const res of [theirs, nowhere, unusable]) {
      expect(res.status).toBe(403)
      expect(res.body.error).toBe('domain_not_found')
    }
    expect(theirs.body).toEqual(nowhere.body)
  })

  test('a path that is not valid UTF-8 is a validation error on name', async () => {
    const res = await t.request('GET', '/api/v1/domains/%ff%fe', { token: owner.token })
    expect(res.status).toBe(400)
    expect(Object.keys(res.body.errors)).toEqual(['name'])
  })
})

describe('organizations', () => {
  test('create, list with domain counts, join and leave', async () => {
    const created = await t.request('POST', '/api/v1/organizations', {
      token: owner.token,
      body: { name: '  Acme   Retail ' },
    })
    expect(created.status).toBe(201)
    const org = created.body.data
    expect(org).toMatchObject({ name: 'Acme Retail', domain_count: 0 })
    expect(Number.isInteger(org.id)).toBe(true)

    const dup = await t.request('POST', '/api/v1/organizations', {
      token: owner.token,
      body: { name: 'acme retail' },
    })
    expect(dup.status).toBe(400)
    expect(dup.body.errors.name).toBeArray()

    const joined = await t.request('PATCH', '/api/v1/domains/example.com', {
      token: owner.token,
      body: { organization_id: org.id, automation_level: 'automatic' },
    })
    expect(joined.status).toBe(200)
    expect(joined.body.data).toMatchObject({ organization_id: org.id, automation_level: 'automatic' })

    const created2 = await t.request('POST', '/api/v1/domains', {
      token: owner.token,
      body: { domain_name: 'brand.example', organization_id: org.id },
    })
    expect(created2.body.data.organization_id).toBe(org.id)

    const list = await t.request('GET', '/api/v1/organizations', { token: owner.token })
    expect(list.body.data).toEqual([expect.objectContaining({ id: org.id, domain_count: 2 })])
    expect(list.body.meta.total).toBe(1)

    const members = await t.request('GET', `/api/v1/organizations/${org.id}/domains`, { token: owner.token })
    expect(members.body.data.map((d: { name: string }) => d.name)).toEqual(['brand.example', 'example.com'])

    const filtered = await t.request('GET', `/api/v1/domains?organization_id=${org.id}`, {
      token: owner.token,
    })
    expect(filtered.body.meta.total).toBe(2)

    const left = await t.request('PATCH', '/api/v1/domains/example.com', {
      token: owner.token,
      body: { organization_id: null },
    })
    expect(left.body.data.organization_id).toBeNull()
    // A PATCH without automation_level keeps it (no schema default written into the body).
    expect(left.body.data.automation_level).toBe('automatic')
  })

  test('another account’s organization cannot be joined or read', async () => {
    const other = await t.account()
    const theirs = await t.request('POST', '/api/v1/organizations', {
      token: other.token,
      body: { name: 'Theirs' },
    })
    const id = theirs.body.data.id
    const join = await t.request('PATCH', '/api/v1/domains/example.com', {
      token: owner.token,
      body: { organization_id: id },
    })
    expect(join.status).toBe(400)
    expect(join.body.errors.organization_id).toBeArray()
    const read = await t.request('GET', `/api/v1/organizations/${id}/domains`, { token: owner.token })
    expect(read.status).toBe(404)
    expect(read.body.error).toBe('not_found')
    const create = await t.request('POST', '/api/v1/domains', {
      token: owner.token,
      body: { domain_name: 'new.example', organization_id: id },
    })
    expect(create.status).toBe(400)
  })

  test('the organization name is required', async () => {
    const res = await t.request('POST', '/api/v1/organizations', {
      token: owner.token,
      body: { name: '   ' },
    })
    expect(res.status).toBe(400)
    expect(res.body.errors).toEqual({ name: ['The organization name is required.'] })
  })
})
