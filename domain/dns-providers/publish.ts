// Publishing a record for a domain through the DNS provider that holds its zone (issue #7): what
// the provider writes API, SPF management and hosted DMARC share. A plan is the dry run (the diff
// against what the provider holds); applying it takes one DNS write from the account's limit
// (docs/api.md "Authentication and limits"; nothing to change is no write), then writes, reads back and audits (writes.ts).

import type { Result } from '../shared/result.ts'
import { invalid, ok } from '../shared/result.ts'
import type { RecordSet } from './ports.ts'
import type { ConnectionStore, OpenProvider, Outcome, Target } from './use-cases.ts'
import { zoneFor } from './use-cases.ts'
import {
  applyPlan,
  DEFAULT_TTL,
  type Plan,
  type PlanOptions,
  type ProviderWrite,
  planSet,
  type WriteDeps,
} from './writes.ts'

export interface PublishDeps extends WriteDeps {
  connections: ConnectionStore
  open: OpenProvider
  /** One DNS write against the account's limit; a failure (429) beyond it. */
  dnsWrites: (accountId: string) => Promise<Result<null>>
}

export interface Published {
  plan: Plan
  dryRun: boolean
  /** The write; null for a dry run and when the provider already holds the set. */
  write: ProviderWrite | null
}

export interface Actor {
  accountId: string
  actor: string
  /** Why, for the audit log (the endpoint or job that wrote). */
  reason: string
}

/** The plan when `dryRun`; otherwise applied (if it changes anything). */
export async function settlePlan(
  deps: PublishDeps,
  plan: Plan,
  input: Actor & { dryRun: boolean },
): Promise<Outcome<Published>> {
  if (input.dryRun || !plan.changed) return ok({ plan, dryRun: input.dryRun, write: null })
  const gate = await deps.dnsWrites(input.accountId)
  if (!gate.ok) return gate
  const written = await applyPlan(deps, plan, input)
  if (!written.ok) return written
  return ok({ plan, dryRun: false, write: written.value })
}

/** The connected zone holding the domain, or the 400 telling how to connect one. */
export async function targetFor(
  deps: Pick<PublishDeps, 'connections' | 'open'>,
  accountId: string,
  domain: string,
): Promise<Outcome<Target>> {
  const target = await zoneFor(deps, accountId, domain)
  if (!target.ok) return target
  if (target.value === null)
    return invalid(
      'domain',
      `No connected DNS provider holds a zone for ${domain}. Connect one (POST /dns-providers/authenticate), or publish the record yourself.`,
    )
  return ok(target.value)
}

/**
 * Plans `set` at a (verified) domain in the connected zone that holds it, then settles it. A domain
 * whose zone no connection holds is a 400 on `domain` telling how to connect one.
 */
export async function publishThroughProvider(
  deps: PublishDeps,
  input: Actor & {
    domain: string
    set: Omit<RecordSet, 'ttl'> & { ttl?: number }
    options?: PlanOptions
    dryRun: boolean
  },
): Promise<Outcome<Published>> {
  const target = await targetFor(deps, input.accountId, input.domain)
  if (!target.ok) return target
  const set = { ...input.set, ttl: input.set.ttl ?? DEFAULT_TTL }
  const plan = await planSet(target.value, input.domain, set, {
    keepTtl: input.set.ttl === undefined,
    ...input.options,
  })
  if (!plan.ok) return plan
  return settlePlan(deps, plan.value, input)
}
