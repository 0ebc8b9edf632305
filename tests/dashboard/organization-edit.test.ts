import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { type FormClient, formClient } from './client.ts'

// /organizations/{id}/rename and /organizations/{id}/delete through app.handle() with a cookie jar:
// the links on the list, the rename form (the rules of the API's PATCH, refusals at the field),
// the delete confirmation and its effect on the domains (checked through the API), the notices,
// CSRF, and another account's organization answering like a missing one.

let t: TestApp
let client: FormClient
let other: FormClient
let token: string
let otherToken: string
let acme: number
let beta: number
let theirs: number

const suffix = Math.random().toString(36).slice(2, 8)
const email = `org-edit-${suffix}@example.com`
const otherEmail = `org-edit-other-${suffix}@example.com`

const api = (method: string, path: string, as = token, body?: unknown) =>
  t.request(method, `/api/v1${path}`, { token: as, body })
const createOrg = async (as: string, name: string): Promise<number> => {
  const res = await api('POST', '/organizations', as, { name })
  expect(res.status).toBe(201)
  return res.body.data.id
}

beforeAll(async () => {
  t = await startTestApp()
  client = formClient(t)
  other = formClient(t)
  await client.signUp(email)
  await other.signUp(otherEmail)
  token = await t.tokenFor(email)
  otherToken = await t.tokenFor(otherEmail)
  acme = await createOrg(token, 'Acme Retail')
  beta = await createOrg(token, 'Beta Corp')
  theirs = await createOrg(otherToken, 'Their Org')
  for (const [name, organizationId] of [
    ['one.example', acme],
    ['two.example', acme],
    ['three.example', beta],
  ] as const) {
    const res = await api('POST', '/domains', token, { domain_name: name, organization_id: organizationId })
    expect(res.status).toBe(201)
  }
  const mine = { domain_name: 'theirs.example', organization_id: theirs }
  expect((await api('POST', '/domains', otherToken, mine)).status).toBe(201)
}, 60_000)
afterAll(async () => {
  await t.close()
})

describe('renaming an organization', () => {
  test('the list links each organization to its rename and delete pages', async () => {
    const page = await client.get('/organizations')
    expect(page.html).toContain(
      `<a href="/organizations/${acme}/rename" aria-label="Rename Acme Retail">Rename</a>`,
    )
    expect(page.html).toContain(
      `<a href="/organizations/${beta}/delete" aria-label="Delete Beta Corp">Delete</a>`,
    )
  })

  test('the form shows the current name; a new one is saved, the list says so', async () => {
    const form = await client.get(`/organizations/${acme}/rename`)
    expect(form.status).toBe(200)
    expect(form.html).toContain('<h1>Rename Acme Retail</h1>')
    expect(form.html).toContain(`action="/organizations/${acme}/rename"`)
    expect(form.html).toContain('value="Acme Retail"')

    const saved = await client.submit(`/organizations/${acme}/rename`, { name: '  Acme   Stores ' })
    expect(saved.status).toBe(303)
    expect(saved.location).toBe('/organizations?renamed=1')
    const list = await client.get('/organizations?renamed=1')
    expect(list.html).toContain('The organization is renamed.')
    expect(list.html).toContain(`<a href="/domains?organization=${acme}">Acme Stores</a>`)
    expect(list.html).not.toContain('Acme Retail')
    const read = await api('GET', `/organizations/${acme}`)
    expect(read.body.data).toMatchObject({ name: 'Acme Stores', domain_count: 2 })
  })

  test('a duplicate, empty or control-character name is refused at the field, nothing changed', async () => {
    const cases: [string, string][] = [
      ['beta CORP', 'An organization named &quot;beta CORP&quot; already exists.'],
      ['   ', 'The organization name is required.'],
      // A pasted tab: the name rules refuse it, at the field.
      ['Tab\there', 'The organization name must not contain control characters.'],
    ]
    for (const [name, message] of cases) {
      const refused = await client.submit(`/organizations/${acme}/rename`, { name })
      expect(refused.status).toBe(400)
      expect(refused.html).toContain('<h1>Rename Acme Stores</h1>')
      expect(refused.html).toContain('id="name-error"')
      expect(refused.html).toContain(message)
      expect(refused.html).toContain('There is a problem')
    }
    const kept = await client.submit(`/organizations/${acme}/rename`, { name: 'beta corp' })
    expect(kept.html).toContain('value="beta corp"')
    expect((await api('GET', `/organizations/${acme}`)).body.data.name).toBe('Acme Stores')
  })

  test('only the case of its own name may change', async () => {
    const saved = await client.submit(`/organizations/${beta}/rename`, { name: 'BETA corp' })
    expect(saved.status).toBe(303)
    expect((await api('GET', `/organizations/${beta}`)).body.data.name).toBe('BETA corp')
  })
})

describe('deleting an organization', () => {
  test('asks first, naming what happens to its domains', async () => {
    const confirm = await client.get(`/organizations/${acme}/delete`)
    expect(confirm.status).toBe(200)
    expect(confirm.html).toContain('<h1>Delete Acme Stores?</h1>')
    expect(confirm.html).toContain('Its 2 domains stay in your account, in no organization')
    expect(confirm.html).toContain(`<form method="post" action="/organizations/${acme}/delete"`)
    expect(confirm.html).toContain('<a href="/organizations">Cancel</a>')
    // Asking changes nothing.
    expect((await api('GET', `/organizations/${acme}`)).status).toBe(200)
  })

  test('confirmed: gone from the list, its domains in no organization, the others untouched', async () => {
    const deleted = await client.submit(`/organizations/${acme}/delete`, {})
    expect(deleted.status).toBe(303)
    expect(deleted.location).toBe('/organizations?deleted=1')
    const list = await client.get('/organizations?deleted=1')
    expect(list.html).toContain(
      'The organization is deleted. Its domains stay in your account, in no organization.',
    )
    expect(list.html).toContain('<h2>1 organization</h2>')
    expect(list.html).not.toContain('Acme Stores')
    for (const name of ['one.example', 'two.example'])
      expect((await api('GET', `/domains/${name}`)).body.data.organization_id).toBeNull()
    expect((await api('GET', '/domains/three.example')).body.data.organization_id).toBe(beta)
    expect((await api('GET', `/organizations/${acme}`)).status).toBe(404)

    // Its pages are gone with it.
    expect((await client.get(`/organizations/${acme}/rename`)).status).toBe(404)
    expect((await client.submit('/organizations', {}, `/organizations/${acme}/delete`)).status).toBe(404)
  })
})

describe('out of reach', () => {
  test('another account’s organization, a missing one and a malformed id are the same 404', async () => {
    for (const path of [`/organizations/${theirs}`, '/organizations/999999999', '/organizations/1x']) {
      for (const page of ['rename', 'delete']) {
        const res = await client.get(`${path}/${page}`)
        expect(res.status).toBe(404)
        expect(res.html).toContain('This organization is not in your account.')
        expect(res.html).not.toContain('Their Org')
      }
      const rename = await client.submit('/organizations', { name: 'Taken' }, `${path}/rename`)
      expect(rename.status).toBe(404)
      const remove = await client.submit('/organizations', {}, `${path}/delete`)
      expect(remove.status).toBe(404)
    }
    const read = await api('GET', `/organizations/${theirs}`, otherToken)
    expect(read.body.data).toMatchObject({ name: 'Their Org', domain_count: 1 })
    expect((await api('GET', '/domains/theirs.example', otherToken)).body.data.organization_id).toBe(theirs)
  })

  test('both forms need the CSRF token and a same-origin post; logged out goes to login', async () => {
    expect((await client.post(`/organizations/${beta}/rename`, { name: 'Forged' })).status).toBe(403)
    expect((await client.post(`/organizations/${beta}/delete`, {})).status).toBe(403)
    expect((await client.post(`/organizations/${beta}/delete`, { _csrf: 'forged' })).status).toBe(403)
    const csrf = /name="_csrf" value="([^"]+)"/.exec((await client.get('/organizations')).html)![1]!
    const foreign = await client.post(
      `/organizations/${beta}/delete`,
      { _csrf: csrf },
      { origin: 'https://evil.example' },
    )
    expect(foreign.status).toBe(403)
    const read = await api('GET', `/organizations/${beta}`)
    expect(read.body.data).toMatchObject({ name: 'BETA corp', domain_count: 1 })

    const visitor = formClient(t)
    for (const page of ['rename', 'delete']) {
      const res = await visitor.get(`/organizations/${beta}/${page}`)
      expect(res.status).toBe(303)
      expect(res.location).toStartWith('/login')
    }
  })
})
