import { Elysia } from 'elysia'
import type { ActiveSession } from '../../domain/accounts/sessions.ts'
import type { Failure } from '../../domain/shared/result.ts'
import type { ManagedSpfConfig } from '../../domain/spf-management/managed-record.ts'
import {
  activateThroughProvider,
  addSourceThroughProvider,
  detectThroughProvider,
  type ProviderSync,
} from '../../domain/spf-management/provider-sync.ts'
import { detectSources } from '../../domain/spf-management/source-use-cases.ts'
import { getSpf, listVersions, rollback } from '../../domain/spf-management/use-cases.ts'
import { formOf, type sessionPlugin } from '../../plugins/session.ts'
import { domainNotFound, noteAccount, param, viewerOf } from './guards.ts'
import { type FieldErrors, htmlResponse, redirectTo } from './layout.ts'
import type { DashboardServices } from './services.ts'
import type { SpfPageInput } from './spf-views.ts'
import { spfPageView } from './spf-views.ts'

// /domains/{name}/spf (issue #8): the SPF management use cases of the API (src/routes/spf.ts) with
// the same deps (src/compose/spf.ts: one store, one DNS, one DNS-write budget per account), as forms.
// Successful changes redirect back with a notice (post/redirect/get); refusals (validation, the
// lookup limit, an unverified domain, 10 DNS writes a minute) are shown on the page.

const VERSIONS_PER_PAGE = 20

const NOTICES: Record<string, string> = {
  activated: 'SPF management is active. Publish the record below at your domain to put it in use.',
  updated: 'Settings saved as a new version.',
  unchanged: 'Nothing changed: SPF management already runs with these settings.',
  added: 'Source added: the managed record serves it now, as a new version.',
  already: 'That source is already authorised: nothing changed.',
  'rolled-back': 'Rolled back: a new version serves what the chosen version served.',
  current: 'That version is the one served already: nothing changed.',
  detected: 'The detected sources were added as a new version.',
  written: 'The SPF record was written through your DNS provider and read back.',
  'written-pending': 'The SPF record was written through your DNS provider; DNS does not show it yet.',
  proposed: 'The change is waiting for your approval below: nothing was written yet.',
  approved: 'Approved: the SPF record was written through your DNS provider.',
  rejected: 'Proposal rejected: nothing was written.',
  stale:
    'That proposal was withdrawn: the SPF record at your DNS provider changed since it was made. Make the change again for a new proposal.',
  'provider-behind':
    'Nothing was written: the SPF record at your DNS provider is newer than what DNS shows yet, and a change made from the older one would undo it. Try again in a minute.',
  'provider-failed':
    'Your DNS provider could not be read or written: the previous record is still in place (see Alerts).',
}

/** The notice of what a change did through a connected DNS provider, if anything. */
export function providerNotice(sync: ProviderSync | null): string | null {
  if (sync === null) return null
  if (sync.status === 'proposed') return 'proposed'
  if (sync.status === 'failed') return sync.behind ? 'provider-behind' : 'provider-failed'
  return sync.verified ? 'written' : 'written-pending'
}

const optional = (value: string | null) => (value === null || value.trim() === '' ? undefined : value.trim())

interface Refusal {
  status: number
  message: string
  errors: FieldErrors
  headers?: Record<string, string>
}

/** An expected failure of a use case, in words for the page (never a 500). */
function refusal(failure: Failure, domain: string, perMinute: number): Refusal {
  switch (failure.code) {
    case 'validation_failed':
      return { status: 400, message: failure.message, errors: failure.errors }
    case 'spf_lookup_limit_exceeded':
      return {
        status: 400,
        message: `The SPF record would need ${failure.lookups} DNS lookups; the limit is ${failure.limit} (RFC 7208 §4.6.4) and receivers would reject every check. Remove a source, or set Flattening to automatic.`,
        errors: {},
      }
    case 'forbidden':
      return {
        status: 403,
        message: `Verify ownership of ${domain} first (see its Overview page): SPF changes are only made for verified domains.`,
        errors: {},
      }
    case 'rate_limited':
      return {
        status: 429,
        message: `Too many DNS changes: at most ${perMinute} a minute per account. Wait ${failure.retryAfter} seconds and try again.`,
        errors: {},
        headers: { 'retry-after': String(failure.retryAfter) },
      }
    case 'not_found':
      return {
        status: 404,
        message:
          failure.resource === 'source'
            ? `That address did not send mail as ${domain} in the last 90 days: only sources from its reports can be added.`
            : 'No such version of the managed record.',
        errors: {},
      }
    default:
      return { status: 400, message: 'The change was refused.', errors: {} }
  }
}

export function spfPages(s: DashboardServices, sessions: ReturnType<typeof sessionPlugin>) {
  const useCases = s.spf
  const automation = { ...s.spf, providers: s.providers }
  const perMinute = s.config.rateLimits.dnsWritesPerMinute

  type Extra = Partial<Pick<SpfPageInput, 'notice' | 'addForm' | 'proposedRecord' | 'proposals'>> & {
    refusal?: Refusal
    versionsPage?: number
  }

  const spfPage = async (session: ActiveSession, name: string, extra: Extra = {}) => {
    const found = await getSpf(useCases, { accountId: session.accountId, name })
    if (!found.ok) return domainNotFound(session)
    const overview = found.value
    const domain = overview.domain.name
    const versionsPage = extra.versionsPage ?? 1
    const versions =
      overview.managed === null
        ? null
        : await listVersions(useCases, {
            accountId: session.accountId,
            name: domain,
            page: { page: versionsPage, perPage: VERSIONS_PER_PAGE },
          })
    // Detection applies what it finds at level "automatic": a page view must not write, so
    // automatic domains detect on request (POST …/spf/detect) and the others here.
    let proposals = extra.proposals ?? null
    if (extra.proposals === undefined && overview.domain.automationLevel !== 'automatic') {
      const detected = await detectSources(useCases, {
        accountId: session.accountId,
        name: domain,
        actor: session.actor,
      })
      proposals = detected.ok ? detected.value.proposals : []
    }
    const { refusal: refused } = extra
    const provider = await providerView(session.accountId, overview.domain.id, domain)
    return htmlResponse(
      spfPageView({
        viewer: viewerOf(session),
        actor: session.actor,
        overview,
        versions: versions?.ok ? versions.value : null,
        versionsPage,
        versionsPerPage: VERSIONS_PER_PAGE,
        proposals,
        notice: extra.notice,
        error: refused ? { message: refused.message, errors: refused.errors } : null,
        addForm: extra.addForm,
        proposedRecord: extra.proposedRecord,
        provider,
      }),
      { status: refused?.status ?? 200, headers: refused?.headers },
    )
  }

  /**
   * The domain's SPF proposals and the SPF writes of its apex through a provider, from the stores
   * only: a page view never calls the provider. Null when there are neither.
   */
  const providerView = async (accountId: string, domainId: number, domain: string) => {
    const proposals = await useCases.proposals.list(accountId, domainId, 10)
    const log = await s.providers.writes.list(accountId, { page: 1, perPage: 50 })
    const writes = log.items.filter((w) => w.domain === domain && w.name === domain && w.type === 'TXT')
    if (proposals.length === 0 && writes.length === 0) return null
    return { proposals, writes: writes.slice(0, 10) }
  }

  /** Back to the page with a notice; a refusal is shown there instead. */
  const answer = (session: ActiveSession, name: string, failure: Failure, extra: Extra = {}) => {
    if (failure.code === 'domain_not_found') return domainNotFound(session)
    return spfPage(session, name, { ...extra, refusal: refusal(failure, name, perMinute) })
  }
  const done = (domain: string, notice: string) =>
    redirectTo(`/domains/${encodeURIComponent(domain)}/spf?done=${notice}`)

  return new Elysia({ name: 'dashboard:spf' })
    .use(sessions)
    .get(
      '/domains/:name/spf',
      ({ session, params, query, request }) => {
        noteAccount(request, session)
        const page = String(query.versions_page ?? '')
        return spfPage(session, param(params.name), {
          notice: NOTICES[String(query.done ?? '')] ?? null,
          versionsPage: /^[1-9]\d{0,5}$/.test(page) ? Number(page) : 1,
        })
      },
      { session: true },
    )
    .post(
      '/domains/:name/spf/activate',
      async ({ session, params, body, request }) => {
        noteAccount(request, session)
        const name = param(params.name)
        const form = formOf(body)
        const all = optional(form.get('all'))
        const flatten = optional(form.get('flatten'))
        const result = await activateThroughProvider(automation, {
          accountId: session.accountId,
          name,
          actor: session.actor,
          // Values off the form's lists are left to the defaults rather than guessed.
          all: all === '-all' || all === '~all' ? all : undefined,
          flatten: ['auto', 'always', 'never'].includes(flatten ?? '')
            ? (flatten as ManagedSpfConfig['flatten'])
            : undefined,
        })
        if (!result.ok) return answer(session, name, result.failure)
        const { value } = result
        const through = providerNotice(value.provider)
        if (through !== null) return done(value.domain, through)
        return done(value.domain, value.activated ? 'activated' : value.changed ? 'updated' : 'unchanged')
      },
      { session: true, csrf: true },
    )
    .post(
      '/domains/:name/spf/sources',
      async ({ session, params, body, request }) => {
        noteAccount(request, session)
        const name = param(params.name)
        const form = formOf(body)
        const addForm = {
          source: form.get('source') ?? '',
          include: form.get('include') ?? '',
          network: form.get('network') ?? '',
        }
        const result = await addSourceThroughProvider(automation, {
          accountId: session.accountId,
          name,
          ip: addForm.source.trim(),
          include: optional(addForm.include),
          network: optional(addForm.network),
          actor: session.actor,
        })
        if (!result.ok) return answer(session, name, result.failure, { addForm })
        const { value } = result
        const through = providerNotice(value.provider)
        if (through !== null) return done(value.domain, through)
        // Unmanaged: nothing was stored; the answer is the record to publish, shown on the page.
        if (value.managed === null) {
          return spfPage(session, value.domain, {
            proposedRecord: value.publish,
            notice: value.changed ? null : 'Your published record authorises that source already.',
          })
        }
        return done(value.domain, value.changed ? 'added' : 'already')
      },
      { session: true, csrf: true },
    )
    .post(
      '/domains/:name/spf/detect',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        const name = param(params.name)
        const result = await detectThroughProvider(automation, {
          accountId: session.accountId,
          name,
          actor: session.actor,
        })
        if (!result.ok) return answer(session, name, result.failure)
        const through = providerNotice(result.value.provider)
        if (through !== null) return done(result.value.domain, through)
        if (result.value.applied) return done(result.value.domain, 'detected')
        return spfPage(session, result.value.domain, {
          proposals: result.value.proposals,
          notice:
            result.value.proposals.length === 0
              ? 'No new sources: every legitimate sender of the last 30 days is authorised.'
              : 'These sources were found; add the ones you recognise.',
        })
      },
      { session: true, csrf: true },
    )
    .post(
      '/domains/:name/spf/rollback',
      async ({ session, params, body, request }) => {
        noteAccount(request, session)
        const name = param(params.name)
        const version = formOf(body).get('version') ?? ''
        if (!/^[1-9]\d{0,8}$/.test(version)) {
          return answer(session, name, { code: 'not_found', resource: 'spf_version' })
        }
        const result = await rollback(useCases, {
          accountId: session.accountId,
          name,
          version: Number(version),
          actor: session.actor,
        })
        if (!result.ok) return answer(session, name, result.failure)
        return done(result.value.domain, result.value.changed ? 'rolled-back' : 'current')
      },
      { session: true, csrf: true },
    )
}
