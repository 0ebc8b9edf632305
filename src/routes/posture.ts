import type { Static } from '@sinclair/typebox'
import { Elysia, t } from 'elysia'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import { type Domain, VERIFICATION_PROOFS } from '../../domain/domains/domain.ts'
import { verifyDomain } from '../../domain/domains/verification.ts'
import { type CheckDeps, domainStatus, type StoredCheck } from '../../domain/posture/check-domain.ts'
import { consume, type RateLimitCounter } from '../../domain/rate-limits/fixed-window.ts'
import { apiModels, authErrors, enumOf, JsonObject, ResponseInt } from '../../plugins/api-models.ts'
import { type AuthDeps, authPlugin } from '../../plugins/auth.ts'
import { item } from '../../plugins/envelope.ts'
import { FailureError, unwrap } from '../../plugins/failures.ts'
import { DomainText } from '../../plugins/input-schemas.ts'
import { DomainModel, presentDomain } from './domains.ts'
import { snakeCaseKeys } from './source-models.ts'

const AreaModel = t.Object({
  status: t.UnionEnum(['ok', 'warning', 'error', 'missing']),
  summary: t.String({ examples: ['p=reject, reports to 1 address'] }),
  record: t.Nullable(t.String()),
})

/** The exact DNS change that fixes an issue (domain/posture/posture.ts). */
export const FixModel = t.Object({
  type: t.Literal('TXT'),
  name: t.String({ examples: ['_dmarc.example.com'] }),
  value: t.String({ examples: ['v=DMARC1; p=none; rua=mailto:r1234@reports.example.net'] }),
  note: t.Optional(t.String()),
})

/**
 * `?details=1`: what the check learned (domain/posture/posture.ts PostureFindings), keys in
 * snake_case. The areas are JSON objects: their shape is the checkers' own and grows with them;
 * a check stored before an area was collected has no such field.
 */
const FindingsModel = t.Object({
  domain: t.String(),
  checked_at: t.String({ format: 'date-time' }),
  dmarc: t.Optional(
    JsonObject({ description: 'DMARC discovery: queries, the record found and its findings' }),
  ),
  report_authorization: t.Optional(
    t.Union([JsonObject(), t.Null()], {
      description: 'External report destinations checked (RFC 7489 §7.1); null when none',
    }),
  ),
  spf: t.Optional(
    JsonObject({ description: 'SPF analysis: the record, include tree, lookups and warnings' }),
  ),
  dkim: t.Optional(JsonObject({ description: 'DKIM selectors checked and the keys found' })),
  mx: t.Optional(
    t.Object({
      status: enumOf(['ok', 'none', 'null_mx', 'temperror']),
      hosts: t.Array(t.Object({ preference: ResponseInt(), exchange: t.String() })),
    }),
  ),
  mta_sts: t.Optional(JsonObject({ description: 'MTA-STS record and policy (RFC 8461)' })),
  tls_rpt: t.Optional(JsonObject({ description: 'TLS-RPT record (RFC 8460)' })),
  bimi: t.Optional(t.Union([JsonObject(), t.Null()])),
  dnssec: t.Optional(
    t.Union([t.Boolean(), t.Null()], { description: 'The resolver vouched (AD bit); null when unknown' }),
  ),
})

export const IssueModel = t.Object({
  code: t.String({ examples: ['spf.lookup_limit_exceeded'] }),
  area: t.UnionEnum(['dmarc', 'spf', 'dkim', 'mail']),
  severity: t.UnionEnum(['info', 'low', 'medium', 'high', 'critical']),
  message: t.String(),
  fix: t.Optional(FixModel),
})

const StatusModel = t.Object({
  domain: t.String(),
  checked_at: t.String({ format: 'date-time' }),
  fresh_until: t.String({
    format: 'date-time',
    description: 'Served from cache until then (the smallest DNS TTL behind it)',
  }),
  grade: t.UnionEnum(['A', 'B', 'C', 'D', 'F']),
  score: t.Integer({ minimum: 0, maximum: 100 }),
  dmarc_policy: t.UnionEnum(['none', 'quarantine', 'reject', 'missing']),
  dmarc: AreaModel,
  spf: AreaModel,
  dkim: AreaModel,
  mail: AreaModel,
  automation: t.Object({
    level: t.UnionEnum(['manual', 'assisted', 'automatic']),
    verified: t.Boolean(),
    status: t.UnionEnum(['monitoring_only', 'waiting_for_verification', 'active']),
    message: t.String(),
  }),
  issues: t.Array(IssueModel),
  findings: t.Optional(FindingsModel),
})

function automationStatus(domain: Domain) {
  const verified = domain.verifiedAt !== null
  if (domain.automationLevel === 'manual') {
    return {
      status: 'monitoring_only' as const,
      message: 'Monitoring and alerts only; no changes are prepared.',
    }
  }
  if (!verified) {
    return {
      status: 'waiting_for_verification' as const,
      message:
        'Verify ownership (POST /domains/{name}/verify) before dmarcwatch prepares or applies DNS changes.',
    }
  }
  return {
    status: 'active' as const,
    message:
      domain.automationLevel === 'assisted'
        ? 'SPF and DMARC changes are prepared and wait for your approval.'
        : 'SPF updates and DMARC policy progression are applied when safe.',
  }
}

export function presentStatus(domain: Domain, check: StoredCheck, details: boolean) {
  const { posture } = check
  return {
    domain: domain.name,
    checked_at: check.checkedAt.toISOString(),
    fresh_until: check.freshUntil.toISOString(),
    grade: posture.grade,
    score: posture.score,
    dmarc_policy: posture.dmarcPolicy,
    ...posture.areas,
    automation: {
      level: domain.automationLevel,
      verified: domain.verifiedAt !== null,
      ...automationStatus(domain),
    },
    issues: posture.issues,
    ...(details ? { findings: snakeCaseKeys(check.findings) as Static<typeof FindingsModel> } : {}),
  }
}

// Forced re-checks cost dozens of DNS queries each; this bounds them per account.
export const REFRESH_POLICY = { scope: 'refresh', limit: 10, windowSeconds: 60 }

export function postureRoutes(
  deps: CheckDeps & {
    auth: AuthDeps
    counter: RateLimitCounter
    verificationDns: DnsResolver
    now: () => Date
  },
) {
  return new Elysia({ name: 'routes:posture', prefix: '/domains', detail: { tags: ['Domains'] } })
    .use(apiModels)
    .use(authPlugin(deps.auth))
    .model({
      DomainStatus: t.Object({ data: StatusModel }),
      Verification: t.Object({
        data: t.Object({
          domain: DomainModel,
          verified: t.Boolean(),
          proof: t.Union(
            [
              enumOf(
                VERIFICATION_PROOFS,
                'How ownership is proven: dns_txt (the _dmarcwatch TXT record), dmarc_rua / dmarc_ruf (the DMARC record names the account’s report address), operator (the CLI, without DNS); null while unverified',
              ),
              t.Null(),
            ],
            { description: 'Which proof verified the domain; null while unverified' },
          ),
          found: t.Array(t.String(), { description: 'TXT values found at the verification name' }),
          message: t.String(),
          requeued: t.Integer({
            minimum: 0,
            description:
              'Report emails that waited for this verification (quarantined as domain_not_verified) and are queued again now',
          }),
        }),
      }),
    })
    .get(
      '/:name/status',
      async ({ principal, params, query }) => {
        const now = deps.now()
        const refresh = query.refresh === '1' || query.refresh === 'true'
        if (refresh) {
          const decision = await consume(deps, { policy: REFRESH_POLICY, subject: principal.accountId, now })
          if (!decision.allowed)
            throw new FailureError({ code: 'rate_limited', retryAfter: decision.retryAfter })
        }
        const { domain, check } = unwrap(
          await domainStatus(deps, { accountId: principal.accountId, name: params.name, now, refresh }),
        )
        return item(presentStatus(domain, check, query.details === '1' || query.details === 'true'))
      },
      {
        auth: true,
        params: t.Object({ name: DomainText() }),
        query: t.Object({
          refresh: t.Optional(
            t.UnionEnum(['0', '1', 'true', 'false'], {
              description: 'Force a re-check (10 per minute per account)',
            }),
          ),
          details: t.Optional(
            t.UnionEnum(['0', '1', 'true', 'false'], { description: 'Include the raw findings' }),
          ),
        }),
        response: { 200: 'DomainStatus', ...authErrors, 403: 'Error' },
        detail: {
          summary: 'DMARC, SPF, DKIM and automation status',
          description:
            'Each area has a status and summary; issues carry a stable code, a severity and, where one exists, the exact DNS record that fixes them. The grade rules are in docs/posture.md. Results are cached for the smallest DNS TTL behind them (1 minute to 1 hour).',
        },
      },
    )
    .post(
      '/:name/verify',
      async ({ principal, params }) => {
        const result = unwrap(
          await verifyDomain(
            { ...deps, dns: deps.verificationDns },
            { accountId: principal.accountId, name: params.name, now: deps.now() },
          ),
        )
        return item({ domain: presentDomain(result.domain), ...result.check })
      },
      {
        auth: true,
        params: t.Object({ name: DomainText() }),
        response: { 200: 'Verification', ...authErrors, 403: 'Error' },
        detail: {
          summary: 'Verify domain ownership',
          description:
            'Looks up TXT `_dmarcwatch.<name>`, expecting `dmarcwatch-verify=<token>` (see the domain’s `verification`), and the domain’s DMARC record, whose `rua` or `ruf` may name the account’s report address instead (GET /ingest/address). On success sets `verified`, says which `proof` was found, sends `domain.verified` and queues again the reports that waited for it (`requeued`). A failed check answers 200 with `verified: false` and what was found.',
        },
      },
    )
}
