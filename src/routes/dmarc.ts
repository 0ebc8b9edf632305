import { Elysia, t } from 'elysia'
import { cnameToPublish } from '../../domain/dmarc/hosting.ts'
import { getDmarc, type HostingDeps, hostDmarc, updateDmarc } from '../../domain/dmarc/hosting-use-cases.ts'
import type { ProgressionWriteDeps } from '../../domain/policy/ports.ts'
import {
  approveProposal,
  rejectProposal,
  rollbackPolicy,
  viewProgression,
} from '../../domain/policy/use-cases.ts'
import type { ReportDomainIds } from '../../domain/reports/aggregate-reads.ts'
import { apiModels, authErrors } from '../../plugins/api-models.ts'
import { type AuthDeps, authPlugin } from '../../plugins/auth.ts'
import { item } from '../../plugins/envelope.ts'
import { unwrap } from '../../plugins/failures.ts'
import { DomainText } from '../../plugins/input-schemas.ts'
import {
  DMARC_MODELS,
  presentApplied,
  presentChange,
  presentDelegation,
  presentHosted,
  presentHosting,
  presentProgression,
  presentPublished,
} from './dmarc-models.ts'
import { ProviderErrorModel } from './dns-provider-models.ts'
import { settle } from './provider-problems.ts'

// Hosted DMARC records (issue #5) and DMARC policy progression (issue #6): docs/hosted-dns.md,
// docs/policy-progression.md, docs/api.md. The domain is `:name` here as in every /domains route
// (Elysia allows one parameter name per path position).

export interface DmarcRouteDeps {
  /** Hosted DMARC records (their report address: compose.ts's `checks.reportAddress`). */
  hosting: HostingDeps
  progression: ProgressionWriteDeps
  reports: ReportDomainIds
  auth: AuthDeps
}

const writeErrors = { ...authErrors, 403: 'Error' } as const
const domainParams = t.Object({ name: DomainText({ examples: ['example.com'] }) })

export function dmarcRoutes(deps: DmarcRouteDeps) {
  const { hosting, progression } = deps

  return new Elysia({ name: 'routes:dmarc', prefix: '/domains', detail: { tags: ['DMARC'] } })
    .use(apiModels)
    .use(authPlugin(deps.auth))
    .model(DMARC_MODELS)
    .model({ DnsProviderError: ProviderErrorModel })
    .get(
      '/:name/dmarc',
      async ({ principal, params }) => {
        const state = unwrap(await getDmarc(hosting, { accountId: principal.accountId, name: params.name }))
        const { domain, hosted } = state
        return item({
          domain: domain.name,
          verified: domain.verified,
          automation_level: domain.automationLevel,
          published: presentPublished(state.published),
          delegation: presentDelegation(state.delegation),
          cname: hosted === null ? null : { ...cnameToPublish(domain.name, hosted.name) },
          hosted: hosted === null ? null : presentHosted(hosted),
        })
      },
      {
        auth: true,
        params: domainParams,
        response: { 200: 'DmarcState', ...writeErrors },
        detail: {
          summary: 'DMARC record: published, hosted, and the CNAME between them',
          description:
            '`published` is what receivers find for the domain now (RFC 9989 §4.10 discovery, through a CNAME when there is one); `hosted` what the service serves at `<label>._dmarc.<SPF_ZONE>` (null until hosted); `delegation` whether `_dmarc.<domain>` is a CNAME to it, checked live over DNS; `cname` the record to publish.',
        },
      },
    )
    .post(
      '/:name/dmarc/host',
      async ({ principal, params, body }) => {
        const result = unwrap(
          await hostDmarc(hosting, {
            accountId: principal.accountId,
            name: params.name,
            record: body?.record,
            actor: principal.actor,
          }),
        )
        return item(presentHosting(result))
      },
      {
        auth: true,
        params: domainParams,
        body: t.Optional(DMARC_MODELS.DmarcHostBody),
        parse: 'json',
        response: { 200: 'DmarcHosting', ...writeErrors },
        detail: {
          summary: 'Host the DMARC record',
          description:
            'Verified domains only (403 `forbidden` otherwise). Serves `record`, by default the domain’s own published record with the account’s report address added to rua, or `v=DMARC1; p=none; rua=mailto:<report address>` when it has none, at `<label>._dmarc.<SPF_ZONE>`, and answers the CNAME to publish at `_dmarc.<domain>`. Hosting again without a record changes nothing; with one it updates the record. A DNS write (10/minute per account) when it writes. An unusable record is a validation error on `record`.',
        },
      },
    )
    .put(
      '/:name/dmarc',
      async ({ principal, params, body }) => {
        const result = unwrap(
          await updateDmarc(hosting, {
            accountId: principal.accountId,
            name: params.name,
            record: body.record,
            actor: principal.actor,
          }),
        )
        return item(presentHosting(result))
      },
      {
        auth: true,
        params: domainParams,
        body: 'DmarcUpdateBody',
        parse: 'json',
        response: { 200: 'DmarcHosting', ...writeErrors, 404: 'Error' },
        detail: {
          summary: 'Replace the hosted DMARC record',
          description:
            'Serves the new record at once (audited). A change of p or pct enters the policy history as an `edit` and withdraws a waiting proposal. 404 `not_found` when the record is not hosted; 403 `forbidden` for unverified domains; a DNS write.',
        },
      },
    )
    .get(
      '/:name/dmarc/progression',
      async ({ principal, params }) => {
        const view = unwrap(
          await viewProgression(progression, { accountId: principal.accountId, name: params.name }),
        )
        return item(presentProgression(view))
      },
      {
        auth: true,
        params: domainParams,
        response: { 200: 'DmarcProgression', ...writeErrors },
        detail: {
          summary: 'DMARC policy progression: readiness, decision, history',
          description:
            'What the engine would do now (`advance`, `propose`, `hold` with its reasons, `rollback`) from the last 14 days of reports, the waiting proposal (assisted domains) and the history of policy changes. Rules and thresholds: docs/policy-progression.md.',
        },
      },
    )
    .post(
      '/:name/dmarc/progression/approve',
      async ({ principal, params, status }) => {
        const done = settle(
          await approveProposal(progression, {
            accountId: principal.accountId,
            name: params.name,
            actor: principal.actor,
          }),
        )
        return done.ok ? item(presentApplied(done.value)) : status(502, done.problem)
      },
      {
        auth: true,
        params: domainParams,
        response: { 200: 'DmarcPolicyApplied', ...writeErrors, 409: 'Error', 502: 'DnsProviderError' },
        detail: {
          summary: 'Approve the proposed policy change',
          description:
            'Applies the waiting proposal of an `assisted` domain through the hosted record (or the connected DNS provider holding the zone) and sends `dmarc.progressed`. The proposal is evaluated again first: 409 `proposal_stale` when the record it was made from changed (it is withdrawn); 400 (validation error on `proposal`) when none waits or the figures no longer support it (it is withdrawn); 502 `dns_provider_error` when the provider cannot be read or written (the proposal keeps waiting). Verified domains only; a DNS write.',
        },
      },
    )
    .post(
      '/:name/dmarc/progression/reject',
      async ({ principal, params }) => {
        const input = { accountId: principal.accountId, name: params.name, actor: principal.actor }
        const done = unwrap(await rejectProposal(progression, input))
        return item({ domain: done.domain, rejected: presentChange(done.rejected) })
      },
      {
        auth: true,
        params: domainParams,
        response: { 200: 'DmarcProposalRejected', ...authErrors, 403: 'Error' },
        detail: {
          summary: 'Reject the proposed policy change',
          description:
            'Discards the waiting proposal of an `assisted` domain (it is `withdrawn`); nothing is written. The next daily run may propose again from newer figures. 400 (validation error on `proposal`) when none waits.',
        },
      },
    )
    .post(
      '/:name/dmarc/progression/rollback',
      async ({ principal, params, body, status }) => {
        const done = settle(
          await rollbackPolicy(progression, {
            accountId: principal.accountId,
            name: params.name,
            actor: principal.actor,
            reason: body?.reason,
          }),
        )
        return done.ok ? item(presentApplied(done.value)) : status(502, done.problem)
      },
      {
        auth: true,
        params: domainParams,
        body: t.Optional(DMARC_MODELS.DmarcRollbackBody),
        parse: 'json',
        response: { 200: 'DmarcPolicyApplied', ...writeErrors, 404: 'Error', 502: 'DnsProviderError' },
        detail: {
          summary: 'Roll the policy back to where the last change started',
          description:
            'Undoes the most recent policy change still in force (an advance or an edit), keeping every other tag, and sends `dmarc.progressed`. 400 (validation error on `policy`) when there is none; 404 `not_found` when the record is not hosted. Verified domains only; a DNS write.',
        },
      },
    )
}
