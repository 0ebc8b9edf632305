import { Elysia } from 'elysia'
import type { ActiveSession } from '../../domain/accounts/sessions.ts'
import type { HostingDeps } from '../../domain/dmarc/hosting-use-cases.ts'
import { hostDmarc } from '../../domain/dmarc/hosting-use-cases.ts'
import type { ProviderKind } from '../../domain/dns-providers/credentials.ts'
import { LABELS, type Outcome } from '../../domain/dns-providers/use-cases.ts'
import type { ProgressionWriteDeps } from '../../domain/policy/ports.ts'
import {
  approveProposal,
  rejectProposal,
  rollbackPolicy,
  undoable,
  viewProgression,
} from '../../domain/policy/use-cases.ts'
import type { sessionPlugin } from '../../plugins/session.ts'
import { dmarcPageView } from './dmarc-views.ts'
import { domainNotFound, noteAccount, param, viewerOf } from './guards.ts'
import { htmlResponse, redirectTo } from './layout.ts'
import type { DashboardServices } from './services.ts'

// /domains/{name}/dmarc (docs/dashboard.md): the DMARC policy progression of the API
// (src/routes/dmarc.ts, docs/policy-progression.md) with the same deps, as CSRF-checked forms:
// host the record, approve or reject a waiting proposal, roll the last change back. A write done
// goes back to the page with a notice (post/redirect/get); a refusal shows the page with the use
// case's own sentence and its status, never a 500.

/** The DMARC hosting and progression use cases' deps, shared with the API (src/compose.ts). */
export interface DmarcPageDeps {
  hosting: HostingDeps
  progression: ProgressionWriteDeps
}

const NOTICES: Record<string, string> = {
  hosted: 'dmarcwatch now serves the DMARC record below. Publish the CNAME to put it in use.',
  approved: 'Approved: the new policy is served now.',
  rejected:
    'Proposal rejected: nothing was changed. The next daily run may propose again from newer figures.',
  'rolled-back': 'Rolled back: the policy before the last change is served now.',
}

/** A refused write in words, with its status; null when the domain is not the account's (404). */
function refusal(failure: Exclude<Outcome<unknown>, { ok: true }>['failure']): {
  status: number
  problem: string
  headers?: Record<string, string>
} | null {
  switch (failure.code) {
    case 'domain_not_found':
      return null
    // The use cases' own sentences: nothing waiting, a proposal withdrawn and why, an unverified
    // domain, a record that cannot be hosted.
    case 'validation_failed':
      return { status: 400, problem: failure.message }
    case 'forbidden':
      return { status: 403, problem: failure.message }
    case 'proposal_stale':
      return { status: 409, problem: failure.message }
    case 'not_found':
      return {
        status: 404,
        problem: 'The DMARC record is not hosted by dmarcwatch: there is nothing to roll back.',
      }
    case 'rate_limited':
      return {
        status: 429,
        problem: `Too many DNS changes for this account: try again in ${failure.retryAfter} seconds.`,
        headers: { 'retry-after': String(failure.retryAfter) },
      }
    case 'dns_provider_authentication_failed':
      return {
        status: 400,
        problem: `${LABELS[failure.provider as ProviderKind] ?? 'Your DNS provider'} rejected the stored credentials: nothing was changed. Connect it again on the DNS providers page.`,
      }
    case 'dns_provider_error':
      return {
        status: 502,
        problem: `Your DNS provider could not be read or written: ${failure.message}`,
        ...(failure.retryAfter === undefined
          ? {}
          : { headers: { 'retry-after': String(failure.retryAfter) } }),
      }
    default:
      return { status: 400, problem: 'The change was refused.' }
  }
}

export function dmarcPages(s: DashboardServices, sessions: ReturnType<typeof sessionPlugin>) {
  const render = async (
    session: ActiveSession,
    name: string,
    shown: {
      notice?: string | null
      problem?: string | null
      status?: number
      headers?: Record<string, string>
    },
  ) => {
    const found = await viewProgression(s.dmarc.progression, { accountId: session.accountId, name })
    if (!found.ok) return domainNotFound(session)
    return htmlResponse(
      dmarcPageView({
        viewer: viewerOf(session),
        actor: session.actor,
        view: found.value,
        undoable: undoable(found.value),
        notice: shown.notice ?? null,
        problem: shown.problem ?? null,
      }),
      { status: shown.status ?? 200, headers: shown.headers ?? {} },
    )
  }
  /** A write done: back to the page with its notice (post/redirect/get); refused: the page, saying why. */
  const settled = async (session: ActiveSession, name: string, outcome: Outcome<unknown>, done: string) => {
    if (outcome.ok) return redirectTo(`/domains/${encodeURIComponent(name)}/dmarc?done=${done}`)
    const refused = refusal(outcome.failure)
    return refused === null ? domainNotFound(session) : render(session, name, refused)
  }
  const input = (session: ActiveSession, params: { name: string }) => ({
    accountId: session.accountId,
    name: param(params.name),
    actor: session.actor,
  })
  type WriteInput = ReturnType<typeof input>
  /** A form of the page: its use case on the session's account, then back to the page or its refusal. */
  const write =
    (run: (args: WriteInput) => Promise<Outcome<unknown>>, done: string) =>
    async ({
      session,
      params,
      request,
    }: {
      session: ActiveSession
      params: { name: string }
      request: Request
    }) => {
      noteAccount(request, session)
      const args = input(session, params)
      return settled(session, args.name, await run(args), done)
    }

  return new Elysia({ name: 'dashboard:dmarc' })
    .use(sessions)
    .get(
      '/domains/:name/dmarc',
      ({ session, params, query, request }) => {
        noteAccount(request, session)
        return render(session, param(params.name), { notice: NOTICES[String(query.done ?? '')] ?? null })
      },
      { session: true },
    )
    .post(
      '/domains/:name/dmarc/host',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        const args = input(session, params)
        const outcome = await hostDmarc(s.dmarc.hosting, args)
        // The parser's remarks on the record now hosted (a copy of the published one): shown with
        // the notice, as the API returns them, rather than lost to the redirect.
        if (outcome.ok && outcome.value.warnings.length > 0)
          return render(session, args.name, {
            notice: `${NOTICES.hosted} Note: ${outcome.value.warnings.join(' ')}`,
          })
        return settled(session, args.name, outcome, 'hosted')
      },
      { session: true, csrf: true },
    )
    .post(
      '/domains/:name/dmarc/progression/approve',
      write((args) => approveProposal(s.dmarc.progression, args), 'approved'),
      { session: true, csrf: true },
    )
    .post(
      '/domains/:name/dmarc/progression/reject',
      write((args) => rejectProposal(s.dmarc.progression, args), 'rejected'),
      { session: true, csrf: true },
    )
    .post(
      '/domains/:name/dmarc/progression/rollback',
      write((args) => rollbackPolicy(s.dmarc.progression, args), 'rolled-back'),
      { session: true, csrf: true },
    )
}
