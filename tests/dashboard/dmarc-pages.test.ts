import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import type { PgBoss } from 'pg-boss'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { type DomainJob, PROGRESS_DOMAIN } from '../../infrastructure/queue/catalogue.ts'
import { registerJobs } from '../../infrastructure/queue/handlers.ts'
import { progressionDeps } from '../../src/compose/policy.ts'
import { processStores } from '../../src/compose/stores.ts'
import { policyJobs } from '../../src/jobs/policy.ts'
import { type DmarcWorld, type SourceDay, startDmarcWorld } from '../api/dmarc-world.ts'
import type { TestAccount, TestApp } from '../support/test-app.ts'
import { until } from '../support/until.ts'
import { type FormClient, formClient } from './client.ts'

// /domains/{name}/dmarc (docs/dashboard.md): DMARC policy progression as forms, end to end: the
// record hosted by one button and served by the built-in responder, the user's CNAME over real
// DNS, a proposal of the daily job on a real pg-boss approved, rejected and rolled back through
// CSRF-checked forms, and refusals shown in words.

const GOOD: SourceDay = { ip: '74.125.0.1', messages: 1_000, pass: 995 }
const email = `dmarc-pages-${Math.random().toString(36).slice(2, 8)}@example.com`

let w: DmarcWorld
let boss: PgBoss
let client: FormClient
let owner: TestAccount

/** A verified domain of the dashboard's account at `automation`; its id. */
async function addDomain(name: string, automation: string): Promise<number> {
  const created = await w.request('POST', '/api/v1/domains', {
    token: owner.token,
    body: { domain_name: name },
  })
  expect(created.status).toBe(201)
  const [row] = rowsOf<{ id: string }>(
    await w.t.db.database.db.execute(sql`update domains set automation_level = ${automation},
        verified_at = now() where name = ${name} and account_id = ${owner.accountId} returning id`),
  )
  return Number(row!.id)
}

/** Hosted at p=none through the page's button, the CNAME published, 14 good days reported. */
async function readyDomain(name: string, automation: string): Promise<number> {
  const id = await addDomain(name, automation)
  const hosted = await client.submit(`/domains/${name}/dmarc`, {}, `/domains/${name}/dmarc/host`)
  expect(hosted.status).toBe(303)
  const state = await w.request('GET', `/api/v1/domains/${name}/dmarc`, { token: owner.token })
  w.pointCname(name, state.body.data.hosted.name)
  await w.markLegitimate(id, GOOD.ip)
  await w.seed(owner, id, [14, 1], [GOOD])
  return id
}

/** One run of the daily progression job for the domain, waited for. */
async function runJob(domainId: number) {
  const job: DomainJob = { accountId: owner.accountId, domainId }
  const id = await boss.send(PROGRESS_DOMAIN.name, job, { singletonKey: String(domainId) })
  const done = await until(
    async () => (await boss.getJobById(PROGRESS_DOMAIN.name, id!))?.state,
    (state) => state === 'completed' || state === 'failed',
  )
  expect(done).toBe('completed')
}

const policyOver = async (name: string) => /p=(\w+)/.exec((await w.dmarcTxt(name))[0] ?? '')?.[1]
const pageOf = (name: string) => client.get(`/domains/${name}/dmarc`)

beforeAll(async () => {
  w = await startDmarcWorld()
  boss = w.t.runtime.boss!
  const progression = progressionDeps(processStores(w.t.runtime), { dns: w.world, now: w.t.runtime.now })
  await registerJobs(boss, policyJobs(boss, { progression, logger: w.t.runtime.logger }))
  // The forms go to the world's app, whose DNS follows the user's CNAME to the hosted record.
  client = formClient({ ...w.t, app: w.app } as TestApp)
  await client.signUp(email)
  const token = await w.t.tokenFor(email)
  const [row] = rowsOf<{ account_id: string }>(
    await w.t.db.database.db.execute(
      sql`select m.account_id from memberships m join users u on u.id = m.user_id where u.email = ${email}`,
    ),
  )
  owner = { accountId: row!.account_id, email, token }
}, 60_000)
afterAll(() => w?.close(), 30_000)

describe('DMARC policy page', () => {
  test('an unhosted domain: one button hosts its record; the CNAME is shown until DNS has it', async () => {
    await addDomain('page.example', 'manual')
    const before = await pageOf('page.example')
    expect(before.status).toBe(200)
    expect(before.html).toContain('action="/domains/page.example/dmarc/host"')
    expect(before.html).toContain('aria-current="page">DMARC policy</a>')

    const hosted = await client.submit('/domains/page.example/dmarc', {}, '/domains/page.example/dmarc/host')
    expect(hosted.location).toBe('/domains/page.example/dmarc?done=hosted')
    const shown = await client.get(hosted.location!)
    expect(shown.html).toContain('dmarcwatch now serves the DMARC record below')
    expect(shown.html).toContain('not published')
    const state = await w.request('GET', '/api/v1/domains/page.example/dmarc', { token: owner.token })
    const target: string = state.body.data.hosted.name
    expect(shown.html).toContain(target)
    expect(shown.html).toContain('_dmarc.page.example')
    expect(shown.html).toContain('Automation level is manual')

    w.pointCname('page.example', target)
    const pointed = await pageOf('page.example')
    expect(pointed.html).toContain('in place')
    expect(pointed.html).not.toContain('not published')
    expect(await policyOver('page.example')).toBe('none')
  }, 30_000)

  test('assisted: the proposal approved by its form is served; the rollback form undoes it', async () => {
    const id = await readyDomain('assisted.example', 'assisted')
    await runJob(id)
    const waiting = await pageOf('assisted.example')
    expect(waiting.html).toContain('Waiting for your approval')
    expect(waiting.html).toMatch(/from <strong>p=none<\/strong> to <strong>p=quarantine<\/strong>/)
    expect(await policyOver('assisted.example')).toBe('none')

    const approved = await client.submit(
      '/domains/assisted.example/dmarc',
      {},
      '/domains/assisted.example/dmarc/progression/approve',
    )
    expect(approved.location).toBe('/domains/assisted.example/dmarc?done=approved')
    expect(await policyOver('assisted.example')).toBe('quarantine')
    const after = await client.get(approved.location!)
    expect(after.html).toContain('Approved: the new policy is served now.')
    expect(after.html).not.toContain('Waiting for your approval')
    expect(after.html).toContain('advance: p=none → p=quarantine')
    // The change is named as the viewer's own.
    expect(after.html).toMatch(/<td>applied<\/td><td>you<\/td>/)

    // Nothing waits any more: approving again is refused in the use case's words.
    const again = await client.submit(
      '/domains/assisted.example/dmarc',
      {},
      '/domains/assisted.example/dmarc/progression/approve',
    )
    expect(again.status).toBe(400)
    expect(again.html).toContain('No DMARC policy change of assisted.example is waiting for approval.')

    expect(after.html).toContain('Roll back to p=none')
    const rolled = await client.submit(
      '/domains/assisted.example/dmarc',
      {},
      '/domains/assisted.example/dmarc/progression/rollback',
    )
    expect(rolled.location).toBe('/domains/assisted.example/dmarc?done=rolled-back')
    expect(await policyOver('assisted.example')).toBe('none')
    const back = await pageOf('assisted.example')
    expect(back.html).toContain('rollback: p=quarantine → p=none')
    expect(back.html).toContain('rolled back')
  }, 40_000)

  test('rejecting a proposal changes nothing and withdraws it', async () => {
    const id = await readyDomain('rejected.example', 'assisted')
    await runJob(id)
    const rejected = await client.submit(
      '/domains/rejected.example/dmarc',
      {},
      '/domains/rejected.example/dmarc/progression/reject',
    )
    expect(rejected.location).toBe('/domains/rejected.example/dmarc?done=rejected')
    const page = await client.get(rejected.location!)
    expect(page.html).toContain('Proposal rejected: nothing was changed.')
    expect(page.html).not.toContain('Waiting for your approval')
    expect(await policyOver('rejected.example')).toBe('none')
    const view = await w.request('GET', '/api/v1/domains/rejected.example/dmarc/progression', {
      token: owner.token,
    })
    expect(view.body.data.pending).toBeNull()
    expect(view.body.data.history[0]).toMatchObject({ status: 'withdrawn' })
  }, 40_000)

  test('refusals in words: nothing to roll back, an unverified domain; another account’s domain is not found', async () => {
    await addDomain('quiet.example', 'manual')
    await client.submit('/domains/quiet.example/dmarc', {}, '/domains/quiet.example/dmarc/host')
    const nothing = await client.submit(
      '/domains/quiet.example/dmarc',
      {},
      '/domains/quiet.example/dmarc/progression/rollback',
    )
    expect(nothing.status).toBe(400)
    expect(nothing.html).toContain('Nothing to roll back')

    await addDomain('unverified.example', 'manual')
    await w.t.db.database.db.execute(
      sql`update domains set verified_at = null where name = 'unverified.example'`,
    )
    const page = await pageOf('unverified.example')
    expect(page.html).not.toContain('/dmarc/host"')
    expect(page.html).toContain('Verify that you own unverified.example first')
    const csrfPage = await pageOf('quiet.example')
    const token = /name="_csrf" value="([^"]+)"/.exec(csrfPage.html)![1]!
    const refused = await client.post('/domains/unverified.example/dmarc/host', { _csrf: token })
    expect(refused.status).toBe(403)
    expect(refused.html).toContain('unverified.example')

    const stranger = await w.t.account()
    await w.request('POST', '/api/v1/domains', {
      token: stranger.token,
      body: { domain_name: 'theirs.example' },
    })
    expect((await pageOf('theirs.example')).status).toBe(404)
    expect((await client.post('/domains/theirs.example/dmarc/host', { _csrf: token })).status).toBe(404)
    // Without the form's token the write is refused before anything runs.
    expect((await client.post('/domains/quiet.example/dmarc/progression/rollback', {})).status).toBe(403)
  }, 30_000)
})
