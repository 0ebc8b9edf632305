import { Elysia, t } from 'elysia'
import { isDemoDomain } from '../../domain/demo/demo-world.ts'
import {
  AUTOMATION_LEVELS,
  DMARC_POLICIES,
  type Domain,
  verificationRecord,
} from '../../domain/domains/domain.ts'
import type { DomainDeps } from '../../domain/domains/use-cases.ts'
import { addDomain, getDomain, listDomains, updateDomain } from '../../domain/domains/use-cases.ts'
import type { RandomBytes } from '../../domain/shared/random.ts'
import {
  apiModels,
  authErrors,
  enumOf,
  PageMeta,
  PaginationQuery,
  ResponseInt,
} from '../../plugins/api-models.ts'
import type { AuthDeps } from '../../plugins/auth.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { item, list, pageRequest } from '../../plugins/envelope.ts'
import { unwrap } from '../../plugins/failures.ts'
import { DomainText, Int4Id, Line, MAX_DOMAIN_LENGTH } from '../../plugins/input-schemas.ts'

const AutomationLevel = enumOf(
  AUTOMATION_LEVELS,
  'manual: monitor and alert only; assisted: prepare SPF and DMARC changes and wait for approval; automatic: apply SPF updates and advance the DMARC policy when safe',
)
const AreaStatus = t.UnionEnum(['unknown', 'ok', 'warning', 'error', 'missing'])

export const DomainModel = t.Object({
  name: t.String({ examples: ['example.com'], description: 'Lower-case A-label form' }),
  automation_level: AutomationLevel,
  organization_id: t.Nullable(ResponseInt()),
  verified: t.Boolean(),
  demo: t.Boolean({
    description: 'The demo domain (`bun run cli demo`): generated reports, answered DNS (docs/demo.md)',
  }),
  verified_at: t.Nullable(t.String({ format: 'date-time' })),
  dkim_selectors: t.Array(t.String(), {
    description: 'DKIM selectors to check besides learned and common ones',
  }),
  verification: t.Object(
    {
      txt_name: t.String({ examples: ['_dmarcwatch.example.com'] }),
      txt_value: t.String({ examples: ['dmarcwatch-verify=5x2k...'] }),
    },
    { description: 'Publish this TXT record, then POST /domains/{name}/verify' },
  ),
  dmarc_policy: t.Nullable(t.UnionEnum([...DMARC_POLICIES]), {
    description: 'The published DMARC policy; null until the first posture check',
  }),
  status: t.Object({
    dmarc: AreaStatus,
    spf: AreaStatus,
    dkim: AreaStatus,
    automation: AutomationLevel,
    grade: t.Nullable(t.String({ description: 'A to F; null until the first posture check' })),
    checked_at: t.Nullable(t.String({ format: 'date-time' })),
  }),
  created_at: t.String({ format: 'date-time' }),
})

export function presentDomain(domain: Domain) {
  const verification = verificationRecord(domain)
  return {
    name: domain.name,
    automation_level: domain.automationLevel,
    organization_id: domain.organizationId,
    verified: domain.verifiedAt !== null,
    demo: isDemoDomain(domain.name),
    verified_at: domain.verifiedAt?.toISOString() ?? null,
    dkim_selectors: domain.dkimSelectors,
    verification: { txt_name: verification.txtName, txt_value: verification.txtValue },
    dmarc_policy: domain.dmarcPolicy,
    status: {
      dmarc: domain.status.dmarc,
      spf: domain.status.spf,
      dkim: domain.status.dkim,
      automation: domain.automationLevel,
      grade: domain.status.grade,
      checked_at: domain.status.checkedAt?.toISOString() ?? null,
    },
    created_at: domain.createdAt.toISOString(),
  }
}

const domainErrors = { ...authErrors, 403: 'Error' } as const

export function domainRoutes(deps: DomainDeps & { auth: AuthDeps; random: RandomBytes }) {
  return new Elysia({ name: 'routes:domains', prefix: '/domains', detail: { tags: ['Domains'] } })
    .use(apiModels)
    .use(authPlugin(deps.auth))
    .model({
      Domain: DomainModel,
      DomainItem: t.Object({ data: DomainModel }),
      DomainList: t.Object({ data: t.Array(DomainModel), meta: PageMeta }),
      DomainCreate: t.Object({
        domain_name: DomainText({
          examples: ['example.com'],
          description: 'Unicode names are converted to A-labels',
        }),
        automation_level: t.Optional(AutomationLevel),
        organization_id: t.Optional(t.Nullable(Int4Id())),
        dkim_selectors: t.Optional(
          t.Array(Line({ maxLength: MAX_DOMAIN_LENGTH }), {
            maxItems: 20,
            examples: [['google', 'selector1']],
          }),
        ),
      }),
      DomainUpdate: t.Object({
        automation_level: t.Optional(AutomationLevel),
        organization_id: t.Optional(
          t.Nullable(Int4Id({ description: 'null removes the domain from its organization' })),
        ),
        dkim_selectors: t.Optional(t.Array(Line({ maxLength: MAX_DOMAIN_LENGTH }), { maxItems: 20 })),
      }),
    })
    .get(
      '',
      async ({ principal, query }) => {
        const page = pageRequest(query)
        const filter = query.organization_id === undefined ? {} : { organizationId: query.organization_id }
        return list(await listDomains(deps, principal.accountId, filter, page), page, presentDomain)
      },
      {
        auth: true,
        query: t.Object({ ...PaginationQuery, organization_id: t.Optional(Int4Id()) }),
        response: { 200: 'DomainList', ...authErrors },
        detail: { summary: 'List domains with DMARC policy and status' },
      },
    )
    .post(
      '',
      async ({ principal, body, status }) => {
        const created = unwrap(
          await addDomain(deps, {
            accountId: principal.accountId,
            domainName: body.domain_name,
            automationLevel: body.automation_level,
            organizationId: body.organization_id,
            dkimSelectors: body.dkim_selectors,
          }),
        )
        return status(201, item(presentDomain(created)))
      },
      {
        auth: true,
        body: 'DomainCreate',
        parse: 'json',
        response: { 201: 'DomainItem', ...authErrors },
        detail: { summary: 'Add a domain' },
      },
    )
    .get(
      '/:name',
      async ({ principal, params }) =>
        item(presentDomain(unwrap(await getDomain(deps, principal.accountId, params.name)))),
      {
        auth: true,
        params: t.Object({ name: DomainText({ examples: ['example.com'] }) }),
        response: { 200: 'DomainItem', ...domainErrors },
        detail: { summary: 'Domain details' },
      },
    )
    .patch(
      '/:name',
      async ({ principal, params, body }) => {
        const updated = await updateDomain(deps, {
          accountId: principal.accountId,
          name: params.name,
          patch: {
            automationLevel: body.automation_level,
            organizationId: body.organization_id,
            dkimSelectors: body.dkim_selectors,
          },
        })
        return item(presentDomain(unwrap(updated)))
      },
      {
        auth: true,
        params: t.Object({ name: DomainText() }),
        body: 'DomainUpdate',
        parse: 'json',
        response: { 200: 'DomainItem', ...domainErrors },
        detail: { summary: 'Change the automation level or organization of a domain' },
      },
    )
}
