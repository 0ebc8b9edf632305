import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { csrfOf, type FormClient, formClient } from './client.ts'

// /organizations through app.handle() with a cookie jar: create (names unique per account, ignoring
// case), put domains in and take them out (the same use case as PATCH /api/v1/domains/{name}), the
// counts and links, CSRF, and another account's organizations and domains out of reach.

let t: TestApp
let client: FormClient
let other: FormClient
let token: string
let otherToken: string

const suffix = Math.random().toString(36).slice(2, 8)
const email = `orgs-${suffix}@example.com`
const otherEmail = `orgs-other-${suffix}@example.com`

const create = (c: FormClient, name: string) => c.submit('/organizations', { name })
const assign = (c: FormClient, domain: string, organizationId: string) =>
  c.submit('/organizations', { domain, organization_id: organizationId }, '/organizations/assign')
const idOf = (html: string, name: string) =>
  new RegExp(`<option value="(\\d+)"(?: selected)?>${name}</option>`).exec(html)?.[1]
const api = (path: string, as = token) => t.request('GET', `/api/v1${path}`, { token: as })

beforeAll(async () => {
  t = await startTestApp()
  client = formClient(t)
  other = formClient(t)
  await client.signUp(email)
  await other.signUp(otherEmail)
  token = await t.tokenFor(email)
  otherToken = await t.tokenFor(otherEmail)
  for (const name of ['one.example', 'two.example'])
    expect((await t.request('POST', '/api/v1/domains', { token, body: { domain_name: name } })).status).toBe(
      201,
    )
  const theirs = { token: otherToken, body: { domain_name: 'theirs.example' } }
  expect((await t.request('POST', '/api/v1/domains', theirs)).status).toBe(201)
}, 60_000)
afterAll(async () => {
  await t.close()
})

describe('organizations page', () => {
  test('none yet: the create form, and no assignment form until there is an organization', async () => {
    const page = await client.get('/organizations')
    expect(page.status).toBe(200)
    expect(page.html).toContain('<h1>Organizations</h1>')
    expect(page.html).toContain('No organizations yet.')
    expect(page.html).toContain('<form method="post" action="/organizations"')
    expect(page.html).not.toContain('action="/organizations/assign"')
    expect(page.html).toContain('aria-current="page">Organizations</a>')
  })

  test('create: an empty or duplicate name is refused at the field; a new one is listed', async () => {
    const empty = await create(client, '   ')
    expect(empty.status).toBe(400)
    expect(empty.html).toContain('id="name-error"')
    expect(empty.html).toContain('The organization name is required.')

    const created = await create(client, 'Acme  Retail')
    expect(created.status).toBe(303)
    expect(created.location).toBe('/organizations?created=1')
    expect((await create(client, 'Beta Corp')).status).toBe(303)
    const duplicate = await create(client, 'acme retail')
    expect(duplicate.status).toBe(400)
    expect(duplicate.html).toContain('An organization named &quot;acme retail&quot; already exists.')
    expect(duplicate.html).toContain('value="acme retail"')

    const page = await client.get('/organizations?created=1')
    expect(page.html).toContain('The organization is created.')
    expect(page.html).toContain('<h2>2 organizations</h2>')
    const acme = idOf(page.html, 'Acme Retail')!
    expect(page.html).toContain(`<a href="/domains?organization=${acme}">Acme Retail</a>`)
    expect(page.html).toContain(
      '<datalist id="domain-names"><option value="one.example"></option><option value="two.example"></option></datalist>',
    )
    const listed = (await api('/organizations')).body.data.map((o: { name: string }) => o.name)
    expect(listed).toEqual(['Acme Retail', 'Beta Corp'])
  })

  test('assign: a domain goes into an organization, counted and linked; "No organization" takes it out', async () => {
    const acme = idOf((await client.get('/organizations')).html, 'Acme Retail')!
    for (const domain of ['one.example', 'TWO.example']) {
      const assigned = await assign(client, domain, acme)
      expect(assigned.status).toBe(303)
      expect(assigned.location).toBe('/organizations?assigned=1')
    }
    let page = await client.get('/organizations?assigned=1')
    expect(page.html).toContain('The domain is assigned.')
    const row = (html: string, name: string) =>
      new RegExp(
        `<a href="/domains\\?organization=\\d+">${name}</a></th>\\s*<td class="num">(\\d+)</td>`,
      ).exec(html)?.[1]
    expect(row(page.html, 'Acme Retail')).toBe('2')
    expect(row(page.html, 'Beta Corp')).toBe('0')
    const inAcme = await api(`/organizations/${acme}/domains`)
    expect(inAcme.body.data.map((d: { name: string }) => d.name).sort()).toEqual([
      'one.example',
      'two.example',
    ])

    const out = await assign(client, 'two.example', '')
    expect(out.location).toBe('/organizations?unassigned=1')
    page = await client.get('/organizations?unassigned=1')
    expect(page.html).toContain('The domain is no longer in an organization.')
    expect(row(page.html, 'Acme Retail')).toBe('1')
    expect((await api('/domains/two.example')).body.data.organization_id).toBeNull()
  })

  test('assign refuses unknown domains and organizations, and another account’s', async () => {
    const acme = idOf((await client.get('/organizations')).html, 'Acme Retail')!
    const unknown = await assign(client, 'nowhere.example', acme)
    expect(unknown.status).toBe(400)
    expect(unknown.html).toContain('id="domain-error"')
    expect(unknown.html).toContain('This domain is not in your account.')
    expect(unknown.html).toContain('value="nowhere.example"')

    const theirs = await assign(client, 'theirs.example', acme)
    expect(theirs.status).toBe(400)
    expect(theirs.html).toContain('This domain is not in your account.')

    expect((await create(other, 'Their Org')).status).toBe(303)
    const theirOrg = idOf((await other.get('/organizations')).html, 'Their Org')!
    const foreign = await assign(client, 'one.example', theirOrg)
    expect(foreign.status).toBe(400)
    expect(foreign.html).toContain('id="organization_id-error"')
    expect(foreign.html).toContain('No organization with this id exists in your account.')
    const junk = await assign(client, 'one.example', '1 or 1=1')
    expect(junk.status).toBe(400)
    expect(junk.html).toContain('Choose an organization from the list.')
    const empty = await assign(client, '', acme)
    expect(empty.html).toContain('Enter a domain of your account.')
    // Nothing moved.
    expect((await api('/domains/one.example')).body.data.organization_id).toBe(Number(acme))
    expect((await api('/domains/theirs.example', otherToken)).body.data.organization_id).toBeNull()
  })

  test('another account sees only its own organizations', async () => {
    const page = await other.get('/organizations')
    expect(page.html).toContain('Their Org')
    expect(page.html).toContain('<h2>1 organization</h2>')
    expect(page.html).not.toContain('Acme Retail')
    expect(page.html).not.toContain('one.example')
  })

  test('every form needs the CSRF token; logged out goes to login', async () => {
    expect((await client.post('/organizations', { name: 'Forged' })).status).toBe(403)
    expect((await client.post('/organizations', { _csrf: 'forged', name: 'Forged' })).status).toBe(403)
    const csrf = csrfOf((await client.get('/organizations')).html)
    const foreign = await client.post(
      '/organizations',
      { _csrf: csrf, name: 'Forged' },
      { origin: 'https://evil.example' },
    )
    expect(foreign.status).toBe(403)
    expect(
      (await client.post('/organizations/assign', { domain: 'one.example', organization_id: '' })).status,
    ).toBe(403)
    expect((await client.get('/organizations')).html).not.toContain('Forged')
    expect((await api('/domains/one.example')).body.data.organization_id).not.toBeNull()

    const visitor = formClient(t)
    const page = await visitor.get('/organizations')
    expect(page.status).toBe(303)
    expect(page.location).toStartWith('/login')
  })
})
