import type { Static } from '@sinclair/typebox'
import type { UnwrapSchema } from 'elysia/types'
import { diffSets } from '../../domain/dns-providers/writes.ts'
import type { IncludeTreeNode, SpfAnalysis } from '../../domain/spf/analysis.ts'
import type { ManagedView } from '../../domain/spf-management/managed-change.ts'
import type { HostedRecords, ManagedSource } from '../../domain/spf-management/managed-record.ts'
import type { ProviderSync } from '../../domain/spf-management/provider-sync.ts'
import type { PublishedSpf } from '../../domain/spf-management/published-record.ts'
import type { SourceProposal } from '../../domain/spf-management/source-detection.ts'
import { sourceTerm } from '../../domain/spf-management/sources.ts'
import type { ConfigDiff } from '../../domain/spf-management/spf-change.ts'
import type { VersionEntry } from '../../domain/spf-management/use-cases.ts'
import type { UserRecord } from '../../domain/spf-management/user-record.ts'
import type { IncludeTreeNodeModel, SourceInput } from './spf-models.ts'

// snake_case presenters of the SPF management API (src/routes/spf.ts).

export function presentSource(source: ManagedSource) {
  return {
    kind: source.kind,
    ...('domain' in source ? { domain: source.domain } : { network: source.network }),
    ...(source.label === undefined ? {} : { label: source.label }),
    ...(source.serviceId === undefined ? {} : { service_id: source.serviceId }),
    term: sourceTerm(source),
  }
}

/** API input to the model's source (the checks are the model's, reported by index). */
export function sourceOf(input: typeof SourceInput.static): ManagedSource {
  const meta = { label: input.label, serviceId: input.service_id }
  if (input.kind === 'ip4' || input.kind === 'ip6')
    return { kind: input.kind, network: input.network ?? '', ...meta }
  return { kind: input.kind, domain: input.domain ?? '', ...meta }
}

function presentRecords(records: HostedRecords) {
  return {
    records: records.records.map(({ name, text, strings }) => ({ name, text, strings })),
    lookups: records.lookups,
    flattened: records.flattened,
    networks: records.networks,
    caveats: records.caveats,
  }
}

export const presentPublish = (publish: UserRecord) => ({
  record: publish.record,
  changed: publish.changed,
  lookups: publish.lookups,
  note: publish.note,
})

export function presentManagement(view: ManagedView | null) {
  if (view === null) return null
  const { state } = view
  return {
    hosted_name: state.hostedName,
    include: `include:${state.hostedName}`,
    version: state.version,
    activated_at: state.activatedAt.toISOString(),
    planned_at: state.plannedAt.toISOString(),
    config: {
      sources: state.config.sources.map(presentSource),
      all: state.config.all,
      flatten: state.config.flatten,
    },
    served: presentRecords(state.records),
    publish: presentPublish(view.publish),
  }
}

function presentTree(node: IncludeTreeNode): Static<typeof IncludeTreeNodeModel> {
  return {
    domain: node.domain,
    via: node.via,
    term: node.term,
    status: node.status,
    record: node.record,
    reason: node.reason,
    lookups: node.lookups,
    branch_lookups: node.branchLookups,
    void_lookups: node.voidLookups,
    children: node.children.map(presentTree),
  }
}

export function presentPublished(published: PublishedSpf, analysis: SpfAnalysis) {
  return {
    status: published.status,
    record: published.record,
    reason: published.reason,
    lookups: analysis.lookups,
    lookup_limit: analysis.lookupLimit,
    void_lookups: analysis.voidLookups,
    void_lookup_limit: analysis.voidLookupLimit,
    warnings: analysis.warnings,
    // Elysia's static type of a recursive schema has `children: never[]`; the value is checked
    // against the schema itself when the response is sent.
    include_tree: presentTree(analysis.tree) as UnwrapSchema<typeof IncludeTreeNodeModel>,
  }
}

export function presentProposal(proposal: SourceProposal) {
  return {
    source: presentSource(proposal.source),
    service: proposal.service,
    ips: proposal.ips,
    messages: proposal.messages,
    spf_failing: proposal.spfFailing,
    dmarc_pass: proposal.dmarcPass,
  }
}

const presentDiff = (diff: ConfigDiff) => ({
  added: diff.added.map(presentSource),
  removed: diff.removed.map(presentSource),
  settings: diff.settings,
})

export function presentVersion(entry: VersionEntry) {
  return {
    version: entry.version,
    current: entry.current,
    reason: entry.reason,
    actor: entry.actor,
    created_at: entry.createdAt,
    config: {
      sources: entry.config.sources.map(presentSource),
      all: entry.config.all,
      flatten: entry.config.flatten,
    },
    served: presentRecords(entry.records),
    changes: presentDiff(entry.changes),
  }
}

/** What add-to-spf did through a connected DNS provider (docs/spf-management.md). */
export function presentProviderSync(sync: ProviderSync | null) {
  if (sync === null) return null
  const plan = sync.plan
  return {
    status: sync.status,
    write_id: sync.status === 'proposed' ? null : sync.writeId,
    proposal_id: sync.status === 'proposed' ? sync.proposalId : null,
    verified: sync.status === 'written' ? sync.verified : false,
    error: sync.status === 'failed' ? sync.error : null,
    before: plan?.before?.values ?? null,
    after: plan?.after.values ?? null,
    diff: plan === null ? null : diffSets(plan.before, plan.after),
  }
}
