import type { AcceptMessage } from '../ingest/intake.ts'
import { fail, invalid, ok, type Result } from '../shared/result.ts'
import { type DemoReport, demoReports } from './demo-reports.ts'
import { DEMO_DOMAIN } from './demo-world.ts'

// `bun run cli demo` (docs/demo.md): the demo domain, verified (it is ours: no DNS can prove it),
// and 30 days of its reports sent through the intake like any report mail, so every figure the
// dashboard and the API show for it comes from the normal pipeline.

export const DEMO_DAYS = 30

export interface DemoStore {
  /** Adds the verified demo domain to the account; false when it is already there. */
  addVerified(accountId: string, name: string, now: Date): Promise<boolean>
  /** Deletes the domain and everything stored for it; false when the account has none. */
  remove(accountId: string, name: string): Promise<boolean>
}

export interface DemoDeps {
  accountIdByEmail(email: string): Promise<string | null>
  reportAddress(accountId: string): Promise<string>
  demo: DemoStore
  /** Packs a generated report into the mail its reporter would send. */
  pack(report: DemoReport, domain: string, to: string): Uint8Array
  accept: AcceptMessage
  /**
   * Queues what a new domain gets once its reports are in: a posture check, then the alert rules,
   * as soon as the worker has digested `messageIds` (or later, when no worker runs yet). Says
   * whether the worker digested them in time.
   */
  followUp(accountId: string, domain: string, messageIds: string[]): Promise<boolean>
  /**
   * Waits a while for the account's report messages still pending to be digested. Removing the
   * demo domain under a message being stored failed its store, and its retry stored it into the
   * next demo domain (twice the reports on some days).
   */
  settle(accountId: string): Promise<void>
  now(): Date
}

export interface DemoInstalled {
  domain: string
  messages: number
  aggregate: number
  failure: number
  tls: number
  /** Whether a running worker digested every report before the command returned. */
  digested: boolean
}

async function account(deps: Pick<DemoDeps, 'accountIdByEmail'>, email: string): Promise<Result<string>> {
  const accountId = await deps.accountIdByEmail(email)
  return accountId === null ? fail({ code: 'not_found', resource: 'account' }) : ok(accountId)
}

export async function installDemo(
  deps: DemoDeps,
  input: { email: string; seed?: number },
): Promise<Result<DemoInstalled>> {
  const found = await account(deps, input.email)
  if (!found.ok) return fail(found.failure)
  const accountId = found.value
  const now = deps.now()
  if (!(await deps.demo.addVerified(accountId, DEMO_DOMAIN, now)))
    return invalid('domain', `${DEMO_DOMAIN} is already in this account: remove it first with --remove`)
  const to = await deps.reportAddress(accountId)
  const reports = demoReports({
    domain: DEMO_DOMAIN,
    now,
    days: DEMO_DAYS,
    seed: input.seed ?? now.getTime(),
  })
  const counts = { aggregate: 0, failure: 0, tls: 0 }
  const ids: string[] = []
  for (const report of reports) {
    const accepted = await deps.accept({
      raw: deps.pack(report, DEMO_DOMAIN, to),
      recipient: to,
      source: 'cli',
      accountId,
    })
    if (!accepted.ok) return fail(accepted.failure)
    ids.push(accepted.value.id)
    counts[report.kind]++
  }
  const digested = await deps.followUp(accountId, DEMO_DOMAIN, ids)
  return ok({ domain: DEMO_DOMAIN, messages: reports.length, ...counts, digested })
}

export async function removeDemo(
  deps: Pick<DemoDeps, 'accountIdByEmail' | 'demo' | 'settle'>,
  input: { email: string },
): Promise<Result<{ domain: string; removed: boolean }>> {
  const found = await account(deps, input.email)
  if (!found.ok) return fail(found.failure)
  await deps.settle(found.value)
  return ok({ domain: DEMO_DOMAIN, removed: await deps.demo.remove(found.value, DEMO_DOMAIN) })
}
