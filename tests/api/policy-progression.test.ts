import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { PgBoss } from 'pg-boss'
import {
  type DomainJob,
  PROGRESS_DOMAIN,
  SCHEDULE_PROGRESSION,
} from '../../infrastructure/queue/catalogue.ts'
import { registerJobs } from '../../infrastructure/queue/handlers.ts'
import { eventsOf } from '../../infrastructure/repositories/pg-event-outbox.ts'
import { progressionDeps } from '../../src/compose/policy.ts'
import { processStores } from '../../src/compose/stores.ts'
import { policyJobs } from '../../src/jobs/policy.ts'
import type { TestAccount } from '../support/test-app.ts'
import { type DmarcWorld, type SourceDay, startDmarcWorld } from './dmarc-world.ts'

// DMARC policy progression end to end (issue #6, docs/policy-progression.md): report figures in the database, the
// progression job on a real pg-boss, the hosted record served by the built-in responder and read
// through the user's CNAME over real DNS, `dmarc.progressed` in the outbox.

let w: DmarcWorld
let boss: PgBoss
let owner: TestAccount

const GOOD: SourceDay = { ip: '74.125.0.1', messages: 1_000, pass: 995 }
const DAY = 86_400_000

beforeAll(async () => {
  w = await startDmarcWorld()
  boss = w.t.runtime.boss!
  const { runtime } = w.t
  const progression = progressionDeps(processStores(runtime), { dns: w.world, now: runtime.now })
  await registerJobs(boss, policyJobs(boss, { progression, logger: runtime.logger }))
  owner = await w.t.account()
}, 60_000)
afterAll(() => w.close())

/** A verified domain at `automation`, its DMARC hosted at p=none, the CNAME published, 14 good days. */
async function hostedDomain(
  name: string,
  automation: string,
  sources: SourceDay[] = [GOOD],
  range: [number, number] = [14, 1],
) {
  const id = await w.addDomain(owner, name, { automation })
  const hosted = await w.request('POST', `/api/v1/domains/${name}/dmarc/host`, { token: owner.token })
  expect(hosted.body.data.hosted.policy).toBe('none')
  w.pointCname(name, hosted.body.data.hosted.name)
  for (const source of sources) await w.markLegitimate(id, source.ip)
  await w.seed(owner, id, range, sources)
  return id
}

async function until<T>(probe: () => Promise<T | null | undefined | false>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    const value = await probe()
    if (value) return value
    await Bun.sleep(100)
  }
  throw new Error('condition not met in time')
}

/** One run of the per-domain job, waited for. */
async function runJob(domainId: number) {
  const job: DomainJob = { accountId: owner.accountId, domainId }
  const id = await boss.send(PROGRESS_DOMAIN.name, job, { singletonKey: String(domainId) })
  const done = await until(async () => {
    const found = await boss.getJobById(PROGRESS_DOMAIN.name, id!)
    return found?.state === 'completed' || found?.state === 'failed' ? found : null
  })
  expect(done.state).toBe('completed')
}

const policyOver = async (name: string) => /p=(\w+)/.exec((await w.dmarcTxt(name))[0] ?? '')?.[1]
const progression = async (name: string) =>
  (await w.request('GET', `/api/v1/domains/${name}/dmarc/progression`, { token: owner.token })).body.data
const progressed = async () =>
  (await eventsOf(w.t.db.database.db, owner.accountId))
    .filter((e) => e.type === 'dmarc.progressed')
    .map((e) => e.data as Record<string, unknown>)
const post = (name: string, action: string, body?: unknown) =>
  w.request('POST', `/api/v1/domains/${name}/dmarc/progression/${action}`, { token: owner.token, body })

test('automatic: the daily run advances none → quarantine, served over DNS, with dmarc.progressed', async () => {
  await hostedDomain('auto.example', 'automatic')
  // Same figures, but manual: monitored, never changed (and not even scheduled).
  await hostedDomain('manual.example', 'manual')
  expect(await policyOver('auto.example')).toBe('none')
  await boss.send(SCHEDULE_PROGRESSION.name, {})
  await until(async () => (await policyOver('auto.example')) === 'quarantine')
  expect(await policyOver('manual.example')).toBe('none')

  const events = await progressed()
  expect(events).toHaveLength(1)
  expect(events[0]).toEqual({
    domain: 'auto.example',
    from: 'none',
    to: 'quarantine',
    reason:
      'Ready for p=quarantine: 99.5% of 13,000 messages passed DMARC over the last 14 days and no legitimate or unidentified source is failing.',
  })
  const view = await progression('auto.example')
  expect(view.hosted).toMatchObject({ policy: 'quarantine' })
  expect(view.history).toHaveLength(1)
  expect(view.history[0]).toMatchObject({
    kind: 'advance',
    status: 'applied',
    actor: 'system',
    rolled_back: false,
  })
  // The next step waits a week.
  expect(view.decision).toMatchObject({ action: 'hold', not_before: expect.any(String) })
  expect(view.decision.blockers[0]).toContain('steps are at least 7 days apart')
  expect((await progression('manual.example')).decision.reason).toContain('Automation level is manual')
}, 40_000)

test('assisted: a proposal waits; approving applies it; nothing is left to approve', async () => {
  const id = await hostedDomain('assisted.example', 'assisted')
  await runJob(id)
  expect(await policyOver('assisted.example')).toBe('none')
  const view = await progression('assisted.example')
  expect(view.decision).toMatchObject({ action: 'propose', kind: 'advance', to: 'quarantine' })
  expect(view.pending).toMatchObject({ kind: 'advance', status: 'proposed', to: { policy: 'quarantine' } })

  const approved = await post('assisted.example', 'approve')
  expect(approved.status).toBe(200)
  expect(approved.body.data.change).toMatchObject({
    kind: 'advance',
    from: { policy: 'none' },
    to: { policy: 'quarantine' },
  })
  expect(await policyOver('assisted.example')).toBe('quarantine')
  const history = (await progression('assisted.example')).history
  expect(history).toHaveLength(1)
  expect(history[0]).toMatchObject({ id: view.pending.id, status: 'applied' })
  expect(history[0].actor).toStartWith('user:')
  expect((await progressed()).at(-1)).toMatchObject({
    domain: 'assisted.example',
    from: 'none',
    to: 'quarantine',
  })

  const again = await post('assisted.example', 'approve')
  expect(again.status).toBe(400)
  expect(again.body.errors.proposal[0]).toContain('No DMARC policy change of assisted.example is waiting')
}, 40_000)

test('a legitimate source failing holds the policy, and says why', async () => {
  const partner: SourceDay = { ip: '198.51.100.7', messages: 100, pass: 50 }
  const id = await hostedDomain('blocked.example', 'automatic', [
    { ...GOOD, messages: 10_000, pass: 9_990 },
    partner,
  ])
  await runJob(id)
  expect(await policyOver('blocked.example')).toBe('none')
  const view = await progression('blocked.example')
  expect(view.readiness).toMatchObject({ ready: false, days: 14 })
  expect(view.decision).toMatchObject({
    action: 'hold',
    reason: 'Not advancing to quarantine yet: 1 legitimate source still fails DKIM.',
    blockers: ['legitimate source 198.51.100.7 passes DMARC on 50.0% of 1,300 messages'],
  })
  expect(view.history).toEqual([])
}, 40_000)

test('failures spiking after a change roll it back', async () => {
  // Good mail until 6 days ago; after the change (5 days ago) the legitimate sender fails 10%.
  const id = await hostedDomain('spike.example', 'automatic', [GOOD], [19, 6])
  await w.seed(owner, id, [4, 0], [{ ...GOOD, pass: 900 }])
  const realNow = w.t.clock.now
  w.t.clock.now = new Date(realNow.getTime() - 5 * DAY)
  try {
    await runJob(id)
  } finally {
    w.t.clock.now = realNow
  }
  expect(await policyOver('spike.example')).toBe('quarantine')

  await runJob(id)
  expect(await policyOver('spike.example')).toBe('none')
  const last = (await progressed()).at(-1)
  expect(last).toMatchObject({ domain: 'spike.example', from: 'quarantine', to: 'none' })
  expect(last!.reason).toBe(
    'Rolled back: legitimate sources fail DMARC on 10.0% of 5,000 messages since the change to quarantine 5 days ago (0.5% before).',
  )
  const history = (await progression('spike.example')).history
  expect(history.map((c: any) => [c.kind, c.status, c.rolled_back])).toEqual([
    ['rollback', 'applied', false],
    ['advance', 'applied', true],
  ])
  // Nothing left in force to undo by hand.
  const manual = await post('spike.example', 'rollback')
  expect(manual.status).toBe(400)
  expect(manual.body.errors.policy[0]).toContain('Nothing to roll back')
}, 40_000)

test('a manual rollback returns to where the last change started', async () => {
  const res = await post('auto.example', 'rollback', { reason: 'a partner complained' })
  expect(res.status).toBe(200)
  expect(res.body.data.change).toMatchObject({
    kind: 'rollback',
    from: { policy: 'quarantine' },
    to: { policy: 'none' },
    reason: 'Rolled back by hand from quarantine to none: a partner complained.',
  })
  expect(await policyOver('auto.example')).toBe('none')
  expect((await progressed()).at(-1)).toMatchObject({
    domain: 'auto.example',
    from: 'quarantine',
    to: 'none',
  })
  expect((await post('auto.example', 'rollback')).status).toBe(400)
  expect((await post('auto.example', 'approve')).status).toBe(400)
  // Not hosted: 404; not verified: 403.
  await w.addDomain(owner, 'plain.example')
  expect((await post('plain.example', 'rollback')).status).toBe(404)
  await w.addDomain(owner, 'unverified.example', { verified: false })
  expect((await post('unverified.example', 'approve')).body.error).toBe('forbidden')
}, 40_000)
