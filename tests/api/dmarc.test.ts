import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { discoverDmarc } from '../../domain/dmarc/discovery.ts'
import { rowsOf } from '../../infrastructure/db/database.ts'
import type { TestAccount } from '../support/test-app.ts'
import { type DmarcWorld, startDmarcWorld, ZONE } from './dmarc-world.ts'

// Hosted DMARC records end to end (issue #5): hosted through the API, served by the built-in
// responder, reached by receivers through the CNAME the user publishes at `_dmarc.<domain>`.

let w: DmarcWorld
let owner: TestAccount
let stranger: TestAccount
let address: string

const OWN = 'v=DMARC1; p=quarantine; sp=none; rua=mailto:dmarc@own.example; adkim=s'

beforeAll(async () => {
  // Four DNS writes a minute per account, so the limit is reachable in a test.
  w = await startDmarcWorld({ RATE_LIMIT_DNS_WRITES_PER_MINUTE: '4' })
  owner = await w.t.account()
  stranger = await w.t.account()
  await w.addDomain(stranger, 'stranger.example', { automation: 'automatic' })
  address = (await w.request('GET', '/api/v1/ingest/address', { token: owner.token })).body.data.address
  w.dns.set('_dmarc.own.example', 'TXT', [{ data: OWN }])
}, 60_000)
afterAll(() => w.close())

const call = (method: string, name: string, suffix = '', body?: unknown, token = owner.token) =>
  w.request(method, `/api/v1/domains/${name}/dmarc${suffix}`, { token, body })

describe('hosting a DMARC record', () => {
  test('before hosting: the published record, nothing hosted', async () => {
    await w.addDomain(owner, 'own.example')
    const res = await call('GET', 'own.example')
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({
      domain: 'own.example',
      verified: true,
      published: { record: OWN, policy: 'quarantine', policy_domain: 'own.example', role: 'author_domain' },
      delegation: { name: '_dmarc.own.example', target: null, current: null, pointed: null },
      cname: null,
      hosted: null,
    })
  })

  test('host: the own record, with the report address added to rua; then the CNAME is followed over DNS', async () => {
    const hosted = await call('POST', 'own.example', '/host')
    expect(hosted.status).toBe(200)
    const name = `own-example._dmarc.${ZONE}`
    const record = `v=DMARC1; p=quarantine; sp=none; rua=mailto:dmarc@own.example,mailto:${address}; adkim=s`
    expect(hosted.body.data).toMatchObject({
      domain: 'own.example',
      changed: true,
      hosted: { name, record, policy: 'quarantine', pct: null },
      cname: {
        name: '_dmarc.own.example',
        type: 'CNAME',
        target: name,
        record: `_dmarc.own.example. IN CNAME ${name}.`,
      },
      warnings: [],
    })
    // Served at once by the responder; the user's _dmarc still holds the old TXT until the CNAME.
    expect(
      (await w.request('GET', '/api/v1/domains/own.example/dmarc', { token: owner.token })).body.data
        .delegation,
    ).toEqual({ name: '_dmarc.own.example', target: name, current: null, pointed: false })
    expect(await w.dmarcTxt('own.example')).toEqual([OWN])

    w.pointCname('own.example', name)
    expect(await w.dmarcTxt('own.example')).toEqual([record])
    const discovered = await discoverDmarc({ dns: w.world }, 'own.example')
    expect(discovered.appliedPolicy).toMatchObject({ tag: 'p', policy: 'quarantine' })
    const state = (await call('GET', 'own.example')).body.data
    expect(state.delegation).toEqual({
      name: '_dmarc.own.example',
      target: name,
      current: name,
      pointed: true,
    })
    expect(state.published).toMatchObject({ record, policy: 'quarantine', role: 'author_domain' })
    expect(state.hosted).toMatchObject({ name, record })
  })

  test('hosting again without a record changes nothing', async () => {
    const again = await call('POST', 'own.example', '/host')
    expect(again.body.data.changed).toBe(false)
    expect(again.body.data.hosted.record).toContain('p=quarantine')
  })

  test('no record of its own: monitoring only, reporting to the account address', async () => {
    await w.addDomain(owner, 'bare.example')
    const res = await call('POST', 'bare.example', '/host')
    expect(res.body.data.hosted.record).toBe(`v=DMARC1; p=none; rua=mailto:${address}`)
    expect(res.body.data.hosted.name).toBe(`bare-example._dmarc.${ZONE}`)
  })

  test('an explicit record is validated: unusable ones are 400 on record, with nothing hosted', async () => {
    const other = await w.t.account()
    await w.addDomain(other, 'explicit.example')
    for (const record of ['v=DMARC1; rua=mailto:a@explicit.example', 'p=reject', 'v=DMARC1; p=none; sp=x']) {
      const res = await call('POST', 'explicit.example', '/host', { record }, other.token)
      expect(res.status, record).toBe(400)
      expect(res.body.errors.record).toHaveLength(1)
    }
    const ok = await call('POST', 'explicit.example', '/host', { record: 'v=DMARC1; p=none' }, other.token)
    expect(ok.status).toBe(200)
    expect(ok.body.data.warnings.join(' ')).toContain(`rua does not include mailto:`)
  })

  test('unverified domains: 403 forbidden, nothing hosted', async () => {
    await w.addDomain(owner, 'unverified.example', { verified: false })
    const res = await call('POST', 'unverified.example', '/host')
    expect(res.status).toBe(403)
    expect(res.body.error).toBe('forbidden')
    expect((await call('GET', 'unverified.example')).body.data.hosted).toBeNull()
  })
})

describe('updating the hosted record', () => {
  test('PUT serves the new record at once, audited; a change of p enters the policy history', async () => {
    const record = `v=DMARC1; p=reject; rua=mailto:${address}`
    const res = await call('PUT', 'own.example', '', { record })
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({ changed: true, hosted: { record, policy: 'reject' } })
    expect(await w.dmarcTxt('own.example')).toEqual([record])
    const audit = rowsOf<{ action: string; actor: string }>(
      await w.t.db.database.db.execute(
        sql`select action, actor from audit_log where account_id = ${owner.accountId} order by id`,
      ),
    )
    expect(audit.map((a) => a.action)).toEqual(['dmarc.host', 'dmarc.host', 'dmarc.update'])
    const history = (await call('GET', 'own.example', '/progression')).body.data.history
    expect(history).toHaveLength(1)
    expect(history[0]).toMatchObject({
      kind: 'edit',
      status: 'applied',
      from: { policy: 'quarantine', pct: null },
      to: { policy: 'reject', pct: null },
      to_record: record,
    })
    expect(history[0].actor).toStartWith('user:')
  })

  test('PUT: the same record changes nothing; a bad one is 400; an unhosted domain is 404', async () => {
    const current = (await call('GET', 'own.example')).body.data.hosted.record
    expect((await call('PUT', 'own.example', '', { record: current })).body.data.changed).toBe(false)
    const bad = await call('PUT', 'own.example', '', { record: 'v=DMARC1; p=maybe' })
    expect(bad.status).toBe(400)
    expect(bad.body.errors.record[0]).toContain('is not none, quarantine or reject')
    const missing = await call('PUT', 'own.example', '', {})
    expect(missing.status).toBe(400)
    await w.addDomain(owner, 'unhosted.example')
    const unhosted = await call('PUT', 'unhosted.example', '', { record: 'v=DMARC1; p=none' })
    expect(unhosted.status).toBe(404)
    expect(unhosted.body.error).toBe('not_found')
  })
})

test("another account's domain: 403 domain_not_found on every route, nothing written", async () => {
  const routes: [string, string, unknown?][] = [
    ['GET', ''],
    ['POST', '/host', {}],
    ['PUT', '', { record: 'v=DMARC1; p=reject' }],
    ['GET', '/progression'],
    ['POST', '/progression/approve'],
    ['POST', '/progression/rollback', {}],
  ]
  for (const [method, suffix, body] of routes) {
    const res = await call(method, 'stranger.example', suffix, body)
    expect(res.status, `${method} ${suffix}`).toBe(403)
    expect(res.body.error).toBe('domain_not_found')
  }
  expect((await call('GET', 'stranger.example', '', undefined, stranger.token)).body.data.hosted).toBeNull()
})

test('hosting and edits are DNS writes: the fifth in a minute is 429', async () => {
  const busy = await w.t.account()
  const names = ['w1.example', 'w2.example', 'w3.example', 'w4.example', 'w5.example']
  for (const name of names) await w.addDomain(busy, name)
  const statuses = []
  for (const name of names) statuses.push((await call('POST', name, '/host', undefined, busy.token)).status)
  expect(statuses).toEqual([200, 200, 200, 200, 429])
  // A call that writes nothing is no DNS write and goes through.
  expect((await call('POST', 'w1.example', '/host', undefined, busy.token)).status).toBe(200)
})
