import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { pgDomainStore } from '../../infrastructure/repositories/pg-domain-store.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// /api/v1/organizations/{group}: read, rename (the rules of creation, names unique per account
// ignoring case) and delete (its domains stay, in no organization), each 404 `not_found` alike for
// another account's organization and for none (docs/api.md, Organizations).

let t: TestApp
let owner: TestAccount
let stranger: TestAccount

const call = (method: string, path: string, as: TestAccount, body?: unknown) =>
  t.request(method, `/api/v1${path}`, { token: as.token, body })
const createOrg = async (as: TestAccount, name: string): Promise<number> => {
  const res = await call('POST', '/organizations', as, { name })
  expect(res.status).toBe(201)
  return res.body.data.id
}
const addDomain = async (as: TestAccount, name: string, organizationId: number | null = null) => {
  const res = await call('POST', '/domains', as, { domain_name: name, organization_id: organizationId })
  expect(res.status).toBe(201)
}
const organizationOf = async (as: TestAccount, domain: string) =>
  (await call('GET', `/domains/${domain}`, as)).body.data.organization_id

beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_API_PER_MINUTE: '100000' })
  owner = await t.account()
  stranger = await t.account()
}, 60_000)
afterAll(() => t.close())

describe('GET /organizations/{group}', () => {
  test('one organization with its domain count', async () => {
    const id = await createOrg(owner, 'Read Me')
    await addDomain(owner, 'read-1.example', id)
    await addDomain(owner, 'read-2.example', id)
    const res = await call('GET', `/organizations/${id}`, owner)
    expect(res.status).toBe(200)
    expect(res.body.data).toEqual({
      id,
      name: 'Read Me',
      domain_count: 2,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    })
  })

  test('another account’s organization and a missing one answer alike', async () => {
    const theirs = await createOrg(stranger, 'Stranger Read')
    const foreign = await call('GET', `/organizations/${theirs}`, owner)
    const missing = await call('GET', '/organizations/2147483647', owner)
    expect(foreign.status).toBe(404)
    expect(foreign.body).toEqual({ error: 'not_found', message: 'No such organization in your account.' })
    expect(missing.status).toBe(404)
    expect(missing.body).toEqual(foreign.body)
  })

  test('an id that is no organization id is a 400 on group, never a database error', async () => {
    for (const group of ['0', '-1', '2147483648', '99999999999999999999', 'abc', '1.5']) {
      const res = await call('GET', `/organizations/${group}`, owner)
      expect(res.status).toBe(400)
      // The field is named `group`, or by the part of the request for an out-of-range number until
      // the error mapping finds path values too (plugins/errors.ts).
      expect(res.body.message).toContain('must be a whole number from 1 to 2147483647')
    }
    const big = await call('DELETE', '/organizations/2147483648', owner)
    expect(big.status).toBe(400)
  })
})

describe('PATCH /organizations/{group}', () => {
  test('renames: trimmed, white space collapsed, listed by its new name', async () => {
    const id = await createOrg(owner, 'Old Name')
    await addDomain(owner, 'renamed.example', id)
    const res = await call('PATCH', `/organizations/${id}`, owner, { name: '  Brand   New ' })
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({ id, name: 'Brand New', domain_count: 1 })
    expect((await call('GET', `/organizations/${id}`, owner)).body.data.name).toBe('Brand New')
    const names = (await call('GET', '/organizations?per_page=100', owner)).body.data.map(
      (o: { name: string }) => o.name,
    )
    expect(names).toContain('Brand New')
    expect(names).not.toContain('Old Name')
    // The domain stays in it.
    expect(await organizationOf(owner, 'renamed.example')).toBe(id)
  })

  test('its own name again, or only its case changed, is allowed', async () => {
    const id = await createOrg(owner, 'Case Study')
    const same = await call('PATCH', `/organizations/${id}`, owner, { name: 'Case Study' })
    expect(same.status).toBe(200)
    const recased = await call('PATCH', `/organizations/${id}`, owner, { name: 'CASE study' })
    expect(recased.status).toBe(200)
    expect(recased.body.data.name).toBe('CASE study')
  })

  test('the name of another organization of the account, in any case, is a 400 on name', async () => {
    await createOrg(owner, 'Taken Name')
    const id = await createOrg(owner, 'Free Name')
    const res = await call('PATCH', `/organizations/${id}`, owner, { name: ' taken  NAME' })
    expect(res.status).toBe(400)
    expect(res.body.errors).toEqual({ name: ['An organization named "taken NAME" already exists.'] })
    expect((await call('GET', `/organizations/${id}`, owner)).body.data.name).toBe('Free Name')
    // Names are unique per account: another account may use it.
    const theirs = await createOrg(stranger, 'Stranger Free')
    const elsewhere = await call('PATCH', `/organizations/${theirs}`, stranger, { name: 'Taken Name' })
    expect(elsewhere.status).toBe(200)
  })

  test('validation: required, bounded, a string, no control characters', async () => {
    const id = await createOrg(owner, 'Valid Only')
    // The schema's messages name the field; the use case's name the organization name. Control
    // characters may be refused by either (C1 controls only by the use case).
    const control = /^The (organization name|name field) must not contain control characters\.$/
    const cases: [unknown, string | RegExp][] = [
      [{}, 'The name field is required.'],
      [{ name: '   ' }, 'The organization name is required.'],
      [{ name: 'x'.repeat(201) }, /at most 200 characters/],
      [{ name: 42 }, 'The name field must be a string.'],
      [{ name: 'Tab\there' }, control],
      [{ name: 'Null\u0000byte' }, control],
      [{ name: 'Line\nbreak' }, control],
      [{ name: 'C1\u0085control' }, 'The organization name must not contain control characters.'],
    ]
    for (const [body, message] of cases) {
      const res = await call('PATCH', `/organizations/${id}`, owner, body)
      expect(res.status).toBe(400)
      expect(Object.keys(res.body.errors)).toEqual(['name'])
      expect(res.body.errors.name).toHaveLength(1)
      if (typeof message === 'string') expect(res.body.errors.name[0]).toBe(message)
      else expect(res.body.errors.name[0]).toMatch(message)
    }
    // 200 characters after trimming are allowed.
    const longest = await call('PATCH', `/organizations/${id}`, owner, { name: 'y'.repeat(200) })
    expect(longest.status).toBe(200)
    const malformed = await t.request('PATCH', `/api/v1/organizations/${id}`, {
      token: owner.token,
      body: '{"name": ',
      headers: { 'content-type': 'application/json' },
    })
    expect(malformed.status).toBe(400)
    expect(Object.keys(malformed.body.errors)).toEqual(['body'])
    expect((await call('GET', `/organizations/${id}`, owner)).body.data.name).toBe('y'.repeat(200))
  })

  test('creation follows the same rules (control characters refused)', async () => {
    const res = await call('POST', '/organizations', owner, { name: 'Bell\u0007' })
    expect(res.status).toBe(400)
    expect(Object.keys(res.body.errors)).toEqual(['name'])
    expect(res.body.errors.name[0]).toMatch(/must not contain control characters\.$/)
    const c1 = await call('POST', '/organizations', owner, { name: 'NEL\u0085' })
    expect(c1.body.errors).toEqual({ name: ['The organization name must not contain control characters.'] })
  })

  test('another account’s organization: 404 like a missing one, and unchanged', async () => {
    const theirs = await createOrg(stranger, 'Stranger Rename')
    const foreign = await call('PATCH', `/organizations/${theirs}`, owner, { name: 'Hijacked' })
    const missing = await call('PATCH', '/organizations/2147483647', owner, { name: 'Hijacked' })
    expect(foreign.status).toBe(404)
    expect(foreign.body.error).toBe('not_found')
    expect(missing.body).toEqual(foreign.body)
    // An invalid name does not tell them apart either.
    const foreignBad = await call('PATCH', `/organizations/${theirs}`, owner, { name: '  ' })
    const missingBad = await call('PATCH', '/organizations/2147483647', owner, { name: '  ' })
    expect(foreignBad.status).toBe(404)
    expect(missingBad.body).toEqual(foreignBad.body)
    expect((await call('GET', `/organizations/${theirs}`, stranger)).body.data.name).toBe('Stranger Rename')
  })
})

describe('DELETE /organizations/{group}', () => {
  test('204; its domains stay in the account, in no organization; others keep theirs', async () => {
    const doomed = await createOrg(owner, 'Doomed')
    const kept = await createOrg(owner, 'Kept')
    await addDomain(owner, 'doomed-1.example', doomed)
    await addDomain(owner, 'doomed-2.example', doomed)
    await addDomain(owner, 'kept.example', kept)

    const res = await call('DELETE', `/organizations/${doomed}`, owner)
    expect(res.status).toBe(204)
    expect(res.body).toBeNull()
    expect(await organizationOf(owner, 'doomed-1.example')).toBeNull()
    expect(await organizationOf(owner, 'doomed-2.example')).toBeNull()
    expect(await organizationOf(owner, 'kept.example')).toBe(kept)
    expect((await call('GET', `/organizations/${kept}`, owner)).body.data.domain_count).toBe(1)

    expect((await call('GET', `/organizations/${doomed}`, owner)).status).toBe(404)
    expect((await call('GET', `/organizations/${doomed}/domains`, owner)).status).toBe(404)
    const again = await call('DELETE', `/organizations/${doomed}`, owner)
    expect(again.status).toBe(404)
    expect(again.body.error).toBe('not_found')
    // Its name is free again, and its id cannot be joined any more.
    await createOrg(owner, 'doomed')
    const join = await call('PATCH', '/domains/doomed-1.example', owner, { organization_id: doomed })
    expect(join.status).toBe(400)
    expect(join.body.errors.organization_id).toBeArray()
  })

  test('an organization without domains is deleted too', async () => {
    const empty = await createOrg(owner, 'Empty One')
    expect((await call('DELETE', `/organizations/${empty}`, owner)).status).toBe(204)
    expect((await call('GET', `/organizations/${empty}`, owner)).status).toBe(404)
  })

  test('another account’s organization: 404 like a missing one, and it and its domains stay', async () => {
    const theirs = await createOrg(stranger, 'Stranger Kept')
    await addDomain(stranger, 'stranger-kept.example', theirs)
    const foreign = await call('DELETE', `/organizations/${theirs}`, owner)
    const missing = await call('DELETE', '/organizations/2147483647', owner)
    expect(foreign.status).toBe(404)
    expect(foreign.body).toEqual({ error: 'not_found', message: 'No such organization in your account.' })
    expect(missing.body).toEqual(foreign.body)
    expect((await call('GET', `/organizations/${theirs}`, stranger)).body.data.domain_count).toBe(1)
    expect(await organizationOf(stranger, 'stranger-kept.example')).toBe(theirs)
  })

  test('domains joining while it is deleted end in no organization, never a 500', async () => {
    const racing = await createOrg(owner, 'Racing')
    const names = Array.from({ length: 8 }, (_, i) => `race-${i}.example`)
    for (const name of names.slice(0, 4)) await addDomain(owner, name, racing)
    for (const name of names.slice(4)) await addDomain(owner, name)
    const joins = names
      .slice(4)
      .map((name) => call('PATCH', `/domains/${name}`, owner, { organization_id: racing }))
    const created = call('POST', '/domains', owner, {
      domain_name: 'race-new.example',
      organization_id: racing,
    })
    const [deleted, ...rest] = await Promise.all([
      call('DELETE', `/organizations/${racing}`, owner),
      ...joins,
      created,
    ])
    expect(deleted.status).toBe(204)
    for (const res of rest) {
      // Each join either ran first (and was undone by the delete) or found the organization gone.
      expect([200, 201, 400]).toContain(res.status)
      if (res.status === 400) expect(Object.keys(res.body.errors)).toEqual(['organization_id'])
    }
    for (const name of [...names, 'race-new.example']) {
      const found = await call('GET', `/domains/${name}`, owner)
      if (found.status === 200) expect(found.body.data.organization_id).toBeNull()
    }
  })

  test('a write naming an organization deleted after the use case checked it is refused, not a 500', async () => {
    // The store itself, past the use case's existence check: the foreign key answers.
    const gone = await createOrg(owner, 'Gone Between')
    await addDomain(owner, 'between.example')
    expect((await call('DELETE', `/organizations/${gone}`, owner)).status).toBe(204)
    const store = pgDomainStore(t.db.database.db)
    expect(await store.update(owner.accountId, 'between.example', { organizationId: gone })).toBe(
      'no_organization',
    )
    const inserted = await store.insert(owner.accountId, {
      name: 'between-new.example',
      automationLevel: 'manual',
      organizationId: gone,
      verificationToken: 'x'.repeat(32),
      dkimSelectors: [],
    })
    expect(inserted).toBe('no_organization')
    expect(await organizationOf(owner, 'between.example')).toBeNull()
  })
})
