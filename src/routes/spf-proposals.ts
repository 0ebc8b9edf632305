import { Elysia, t } from 'elysia'
import type { PublishDeps } from '../../domain/dns-providers/publish.ts'
import { diffSets } from '../../domain/dns-providers/writes.ts'
import { invalid } from '../../domain/shared/result.ts'
import {
  approveSpfProposal,
  listSpfProposals,
  rejectSpfProposal,
  type SpfAutomationDeps,
  type SpfProposal,
} from '../../domain/spf-management/proposals.ts'
import { apiModels, authErrors } from '../../plugins/api-models.ts'
import { type AuthDeps, authPlugin } from '../../plugins/auth.ts'
import { item } from '../../plugins/envelope.ts'
import { unwrap } from '../../plugins/failures.ts'
import { DomainText, RowId } from '../../plugins/input-schemas.ts'
import { ProviderErrorModel, presentWrite, WriteModel } from './dns-provider-models.ts'
import { settle } from './provider-problems.ts'

// SPF changes waiting for approval (issue #19, part 2): the proposals `assisted` domains get when
// their zone is on a connected DNS provider, listed with their diff, approved (written through the
// provider) or rejected. docs/spf-management.md "Through a connected provider", docs/api.md.

export interface SpfProposalRouteDeps {
  spf: SpfAutomationDeps
  providers?: PublishDeps
  auth: AuthDeps
}

const iso = (d: Date | null) => d?.toISOString() ?? null

export function presentSpfProposal(p: SpfProposal) {
  return {
    id: p.id,
    status: p.status,
    from_record: p.fromRecord,
    to_record: p.toRecord,
    before: p.before?.values ?? null,
    after: p.after.values,
    diff: diffSets(p.before, p.after),
    reason: p.reason,
    actor: p.actor,
    created_at: p.createdAt.toISOString(),
    decided_at: iso(p.decidedAt),
    decided_by: p.decidedBy,
    write_id: p.writeId,
  }
}

const ProposalModel = t.Object({
  id: t.Integer(),
  status: t.UnionEnum(['proposed', 'applied', 'rejected', 'withdrawn'], {
    description:
      'proposed: waiting for approval; applied: written through the provider; rejected; withdrawn: replaced by a newer proposal, or stale when approved',
  }),
  from_record: t.Nullable(t.String({ description: 'The SPF record the provider held; null: none' })),
  to_record: t.String({ description: 'The SPF record proposed' }),
  before: t.Nullable(t.Array(t.String(), { description: 'The TXT values at the apex before' })),
  after: t.Array(t.String(), { description: 'The TXT values after (other TXT values kept)' }),
  diff: t.Object({
    added: t.Array(t.String()),
    removed: t.Array(t.String()),
    ttl: t.Nullable(t.Object({ before: t.Nullable(t.Integer()), after: t.Nullable(t.Integer()) })),
  }),
  reason: t.String(),
  actor: t.String(),
  created_at: t.String({ format: 'date-time' }),
  decided_at: t.Nullable(t.String({ format: 'date-time' })),
  decided_by: t.Nullable(t.String()),
  write_id: t.Nullable(t.String({ format: 'uuid' })),
})

const params = t.Object({
  name: DomainText({ examples: ['example.com'] }),
  id: RowId({ description: 'The proposal id' }),
})
const domainParams = t.Object({ name: DomainText({ examples: ['example.com'] }) })
const decideErrors = { ...authErrors, 403: 'Error', 404: 'Error', 409: 'Error' } as const

export function spfProposalRoutes(deps: SpfProposalRouteDeps) {
  const { spf, providers } = deps
  return new Elysia({ name: 'routes:spf-proposals', prefix: '/domains', detail: { tags: ['SPF'] } })
    .use(apiModels)
    .use(authPlugin(deps.auth))
    .model({
      SpfProposalList: t.Object({
        data: t.Object({ domain: t.String(), proposals: t.Array(ProposalModel) }),
      }),
      SpfProposalApproved: t.Object({
        data: t.Object({ domain: t.String(), proposal: ProposalModel, write: t.Nullable(WriteModel) }),
      }),
      SpfProposalRejected: t.Object({ data: t.Object({ domain: t.String(), proposal: ProposalModel }) }),
      DnsProviderError: ProviderErrorModel,
    })
    .get(
      '/:name/spf/proposals',
      async ({ principal, params }) => {
        const listed = unwrap(
          await listSpfProposals(spf, { accountId: principal.accountId, name: params.name }),
        )
        return item({ domain: listed.domain, proposals: listed.proposals.map(presentSpfProposal) })
      },
      {
        auth: true,
        params: domainParams,
        response: { 200: 'SpfProposalList', ...authErrors, 403: 'Error' },
        detail: {
          summary: 'SPF changes proposed for approval',
          description:
            'The last 20 proposals of the domain, the waiting one first: at automation level `assisted`, an SPF change (add-to-spf, activation, detected sources) of a domain whose zone is on a connected DNS provider is stored here with the record before and after instead of being written.',
        },
      },
    )
    .post(
      '/:name/spf/proposals/:id/approve',
      async ({ principal, params, status }) => {
        const input = {
          accountId: principal.accountId,
          name: params.name,
          id: params.id,
          actor: principal.actor,
        }
        const done = settle(
          providers === undefined
            ? invalid('domain', 'No DNS provider writes in this process.')
            : await approveSpfProposal({ ...spf, providers }, input),
        )
        if (!done.ok) return status(502, done.problem)
        const { domain, proposal, write } = done.value
        return item({
          domain,
          proposal: presentSpfProposal(proposal),
          write: write === null ? null : presentWrite(write),
        })
      },
      {
        auth: true,
        params,
        response: { 200: 'SpfProposalApproved', ...decideErrors, 502: 'DnsProviderError' },
        detail: {
          summary: 'Approve an SPF proposal: write it through the DNS provider',
          description:
            "Writes the proposed record into the apex TXT set through the connected provider (plan from what it holds, a DNS write, read back from the provider and over DNS, audited, `POST /dns-providers/writes/{id}/rollback` undoes it). 409 `proposal_stale` when the provider's SPF record is no longer the one the proposal was made from (it is withdrawn); 400 on `id` when the proposal is not waiting; 404 `not_found` for an unknown id; 403 for unverified domains; 502 `dns_provider_error` when the write fails (the previous record stays, the proposal keeps waiting).",
        },
      },
    )
    .post(
      '/:name/spf/proposals/:id/reject',
      async ({ principal, params }) => {
        const input = {
          accountId: principal.accountId,
          name: params.name,
          id: params.id,
          actor: principal.actor,
        }
        const done = unwrap(await rejectSpfProposal(spf, input))
        return item({ domain: done.domain, proposal: presentSpfProposal(done.proposal) })
      },
      {
        auth: true,
        params,
        response: { 200: 'SpfProposalRejected', ...decideErrors },
        detail: {
          summary: 'Reject an SPF proposal',
          description:
            'Discards the waiting proposal; nothing is written. 400 on `id` when it is not waiting.',
        },
      },
    )
}
