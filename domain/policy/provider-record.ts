// The DMARC record of a domain whose zone is on a connected DNS provider (issue #19, part 2): policy
// progression reads the `_dmarc.<domain>` TXT the provider holds and writes a change through the
// provider with the ordinary write path (docs/dns-providers.md "A write": plan, DNS-write limit,
// apply, read back from the provider and over DNS, audit). A write that fails leaves the previous
// record in place: a refused write changed nothing, and a write the provider does not hold as sent
// is put back to the record it replaced. docs/policy-progression.md "Through a connected DNS provider".

import type { PublishDeps } from '../dns-providers/publish.ts'
import { type Outcome, providerFailure, zoneFor } from '../dns-providers/use-cases.ts'
import { applyPlan, DEFAULT_TTL, planSet } from '../dns-providers/writes.ts'
import { invalid, ok } from '../shared/result.ts'
import type { ZoneDmarc, ZoneDmarcRecord } from './ports.ts'

const isDmarc = (value: string) => /^v\s*=\s*DMARC1\s*(;|$)/i.test(value.trim())

/** The port over the DNS provider use cases (the wiring hands it the provider deps). */
export function providerDmarc(deps: PublishDeps): ZoneDmarc {
  return {
    async read(accountId, domain): Promise<Outcome<ZoneDmarcRecord | null>> {
      const target = await zoneFor(deps, accountId, domain)
      if (!target.ok) return target
      if (target.value === null) return ok(null)
      const { provider, zone, connection } = target.value
      const read = await provider.readRecords(zone, { name: `_dmarc.${domain}`, type: 'TXT' })
      if (!read.ok) return { ok: false, failure: providerFailure(connection.provider, read.failure) }
      const records = (read.value[0]?.values ?? []).filter(isDmarc)
      // Two DMARC records are no record at all for receivers (RFC 7489 §6.6.3): not ours to pick one.
      return ok({ record: records.length === 1 ? records[0]! : null, connectionId: connection.id })
    },

    async write(accountId, domain, change) {
      const target = await zoneFor(deps, accountId, domain)
      if (!target.ok) return target
      if (target.value === null)
        return invalid('domain', `No connected DNS provider holds a zone for ${domain} any more.`)
      const set = { name: `_dmarc.${domain}`, type: 'TXT', ttl: DEFAULT_TTL, values: [change.toRecord] }
      // Other TXT values at the name are kept; only the DMARC record is replaced.
      const plan = await planSet(target.value, domain, set, { keepTtl: true, keep: (v) => !isDmarc(v) })
      if (!plan.ok) return plan
      const held = (plan.value.before?.values ?? []).filter(isDmarc)
      if (held.length !== 1 || held[0] !== change.fromRecord)
        return invalid('policy', `The DMARC record of ${domain} changed at the DNS provider meanwhile.`)
      if (!plan.value.changed) return ok({ writeId: null })
      const gate = await deps.dnsWrites(accountId)
      if (!gate.ok) return gate
      const written = await applyPlan(deps, plan.value, {
        accountId,
        actor: change.actor,
        reason: change.reason,
      })
      if (!written.ok) return written
      if (written.value.status !== 'failed') return ok({ writeId: written.value.id })
      // Accepted, but the provider holds something else: put the previous record back, so a step is
      // never half taken, and report the failure (the job retries, an alert is raised).
      const before = plan.value.before
      if (before !== null) await target.value.provider.upsertRecordSet(target.value.zone, before)
      return {
        ok: false,
        failure: {
          code: 'dns_provider_error',
          provider: target.value.connection.provider,
          kind: 'unavailable',
          message: written.value.error ?? 'the provider did not keep the record',
          writeId: written.value.id,
        },
      }
    },
  }
}
