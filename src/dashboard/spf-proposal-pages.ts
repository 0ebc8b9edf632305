import { Elysia } from 'elysia'
import { approveSpfProposal, rejectSpfProposal } from '../../domain/spf-management/proposals.ts'
import type { sessionPlugin } from '../../plugins/session.ts'
import { domainNotFound, noteAccount, param } from './guards.ts'
import { redirectTo } from './layout.ts'
import type { DashboardServices } from './services.ts'

// Approving and rejecting an SPF proposal from the SPF page (issue #19, part 2): the use cases of
// POST /api/v1/domains/{name}/spf/proposals/{id}/approve|reject with the same deps, as CSRF-checked
// forms. Every outcome goes back to the SPF page with a notice (post/redirect/get).

const PROPOSAL_ID = /^[1-9]\d{0,14}$/

export function spfProposalPages(s: DashboardServices, sessions: ReturnType<typeof sessionPlugin>) {
  const back = (domain: string, notice: string) =>
    redirectTo(`/domains/${encodeURIComponent(domain)}/spf?done=${notice}#provider`)

  return new Elysia({ name: 'dashboard:spf-proposals' })
    .use(sessions)
    .post(
      '/domains/:name/spf/proposals/:id/approve',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        const name = param(params.name)
        const id = param(params.id)
        if (!PROPOSAL_ID.test(id)) return back(name, 'stale')
        const input = { accountId: session.accountId, name, id: Number(id), actor: session.actor }
        const result = await approveSpfProposal({ ...s.spf, providers: s.providers }, input)
        if (result.ok) return back(result.value.domain, 'approved')
        const { failure } = result
        if (failure.code === 'domain_not_found') return domainNotFound(session)
        if (
          failure.code === 'proposal_stale' ||
          failure.code === 'validation_failed' ||
          failure.code === 'not_found'
        )
          return back(name, 'stale')
        return back(name, 'provider-failed')
      },
      { session: true, csrf: true },
    )
    .post(
      '/domains/:name/spf/proposals/:id/reject',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        const name = param(params.name)
        const id = param(params.id)
        if (!PROPOSAL_ID.test(id)) return back(name, 'stale')
        const input = { accountId: session.accountId, name, id: Number(id), actor: session.actor }
        const result = await rejectSpfProposal(s.spf, input)
        if (!result.ok && result.failure.code === 'domain_not_found') return domainNotFound(session)
        return back(name, result.ok ? 'rejected' : 'stale')
      },
      { session: true, csrf: true },
    )
}
