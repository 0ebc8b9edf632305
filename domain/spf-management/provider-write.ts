// The SPF record written through a connected DNS provider (issue #19, part 2): planned into the
// TXT set at the domain's apex, keeping every other TXT value there (site verifications share the
// RRset) and replacing every SPF value with the one record (two are a permerror, RFC 7208 §4.5),
// then written with the ordinary write path (docs/dns-providers.md "A write"). Shared by the
// automatic writes (provider-sync.ts) and the approval of a proposal (proposals.ts).

import { type PublishDeps, settlePlan } from '../dns-providers/publish.ts'
import type { Outcome, Target } from '../dns-providers/use-cases.ts'
import { DEFAULT_TTL, type Plan, type ProviderWrite, planSet } from '../dns-providers/writes.ts'
import { ok } from '../shared/result.ts'
import { isSpfRecord } from '../spf/record.ts'

/** The apex TXT set with `record` as its only SPF value, against what the provider holds now. */
export function planSpfRecord(target: Target, domain: string, record: string): Promise<Outcome<Plan>> {
  const set = { name: domain, type: 'TXT', ttl: DEFAULT_TTL, values: [record] }
  return planSet(target, domain, set, { keep: (value) => !isSpfRecord(value), keepTtl: true })
}

/**
 * Applies the plan (one DNS write from the account's limit, read back, audited); null when the
 * provider holds it already. Never half applied: a write the provider refused changed nothing, and
 * one it accepted but does not hold as sent (or whose read-back failed) is put back to the set it
 * replaced, and reported as a failure with the write's id (the `dns_write_failing` alert reads it).
 */
export async function writeSpfPlan(
  deps: PublishDeps,
  target: Target,
  plan: Plan,
  input: { accountId: string; actor: string; reason: string },
): Promise<Outcome<ProviderWrite | null>> {
  if (!plan.changed) return ok(null)
  const settled = await settlePlan(deps, plan, { ...input, dryRun: false })
  if (!settled.ok) return settled
  const write = settled.value.write!
  if (write.status !== 'failed') return ok(write)
  if (plan.before !== null) await target.provider.upsertRecordSet(target.zone, plan.before)
  else await target.provider.deleteRecordSet(target.zone, plan.after.name, plan.after.type)
  return {
    ok: false,
    failure: {
      code: 'dns_provider_error',
      provider: target.connection.provider,
      kind: 'unavailable',
      message: write.error ?? 'the provider did not keep the record',
      writeId: write.id,
    },
  }
}
