import { Elysia, t } from 'elysia'
import { normalizeDomainName } from '../../domain/domains/domain-name.ts'
import {
  createEmbedKey,
  type EmbedKey,
  type EmbedKeyStore,
  MAX_ORIGINS,
  originAllowed,
  revokeEmbedKey,
} from '../../domain/embed/embed-key.ts'
import { assessPosture } from '../../domain/posture/assess.ts'
import { type CollectDeps, collectFindings } from '../../domain/posture/collect.ts'
import type { Posture } from '../../domain/posture/posture.ts'
import type { RandomBytes } from '../../domain/shared/random.ts'
import { apiModels, authErrors, PageMeta, PaginationQuery } from '../../plugins/api-models.ts'
import { type AuthDeps, authPlugin } from '../../plugins/auth.ts'
import { item, list, pageRequest } from '../../plugins/envelope.ts'
import { FailureError, unwrap } from '../../plugins/failures.ts'
import { DomainText, IdText, Line } from '../../plugins/input-schemas.ts'
import { IssueModel } from './posture.ts'

const EmbedKeyModel = t.Object({
  id: t.String({ format: 'uuid' }),
  key: t.String({
    examples: ['ek_3k2j...'],
    description: 'Public: it goes in the page that embeds the scanner',
  }),
  name: t.String(),
  allowed_origins: t.Array(t.String({ examples: ['https://www.example.com'] })),
  snippet: t.String({ description: 'HTML to paste into a page' }),
  created_at: t.String({ format: 'date-time' }),
})

function presentKey(key: EmbedKey, publicUrl: string) {
  return {
    id: key.id,
    key: key.key,
    name: key.name,
    allowed_origins: key.allowedOrigins,
    snippet: `<div data-dmarcwatch-scanner></div>\n<script src="${publicUrl}/embed/widget.js" data-key="${key.key}" async></script>`,
    created_at: key.createdAt.toISOString(),
  }
}

/** Settings → API Access → embed keys: managed with the API token like everything else. */
export function embedKeyRoutes(deps: {
  embedKeys: EmbedKeyStore
  random: RandomBytes
  auth: AuthDeps
  publicUrl: string
}) {
  return new Elysia({ name: 'routes:embed-keys', prefix: '/embed-keys', detail: { tags: ['Embed'] } })
    .use(apiModels)
    .use(authPlugin(deps.auth))
    .model({
      EmbedKey: EmbedKeyModel,
      EmbedKeyItem: t.Object({ data: EmbedKeyModel }),
      EmbedKeyList: t.Object({ data: t.Array(EmbedKeyModel), meta: PageMeta }),
      EmbedKeyCreate: t.Object({
        name: Line({ maxLength: 100, examples: ['Marketing site'] }),
        allowed_origins: t.Array(Line({ maxLength: 2048 }), {
          maxItems: MAX_ORIGINS,
          examples: [['https://www.example.com']],
        }),
      }),
    })
    .get(
      '',
      async ({ principal, query }) => {
        const page = pageRequest(query)
        const found = await deps.embedKeys.page(principal.accountId, page)
        return list(found, page, (k) => presentKey(k, deps.publicUrl))
      },
      {
        auth: true,
        query: t.Object(PaginationQuery),
        response: { 200: 'EmbedKeyList', ...authErrors },
        detail: { summary: 'List embed keys' },
      },
    )
    .post(
      '',
      async ({ principal, body, status }) => {
        const created = unwrap(
          await createEmbedKey(deps, {
            accountId: principal.accountId,
            name: body.name,
            allowedOrigins: body.allowed_origins,
          }),
        )
        return status(201, item(presentKey(created, deps.publicUrl)))
      },
      {
        auth: true,
        body: 'EmbedKeyCreate',
        parse: 'json',
        response: { 201: 'EmbedKeyItem', ...authErrors },
        detail: { summary: 'Create an embed key for the scanner widget, with the origins allowed to use it' },
      },
    )
    .delete(
      '/:id',
      async ({ principal, params, status }) => {
        unwrap(
          await revokeEmbedKey(deps, { accountId: principal.accountId, id: params.id, now: deps.auth.now() }),
        )
        return status(204, undefined)
      },
      {
        auth: true,
        params: t.Object({ id: IdText() }),
        response: { 204: t.Undefined(), ...authErrors, 404: 'Error' },
        detail: { summary: 'Revoke an embed key' },
      },
    )
}

const ScanModel = t.Object({
  domain: t.String(),
  grade: t.UnionEnum(['A', 'B', 'C', 'D', 'F']),
  score: t.Integer(),
  dmarc_policy: t.UnionEnum(['none', 'quarantine', 'reject', 'missing']),
  areas: t.Record(
    t.String(),
    t.Object({ status: t.String(), summary: t.String(), record: t.Nullable(t.String()) }),
  ),
  issues: t.Array(IssueModel),
  checked_at: t.String({ format: 'date-time' }),
})

// Scans are public and cost dozens of DNS queries: results are kept briefly, bounded in number.
const SCAN_CACHE_MS = 5 * 60_000
const SCAN_CACHE_ENTRIES = 2000

/**
 * The public scanner: `GET /api/embed/{embed_key}/scan?domain=`. CORS is answered only for the key's
 * own origins; a browser request from any other origin gets 403 and no CORS headers. Requests
 * without an Origin (not from a browser page) are served without CORS headers.
 */
export function embedPublicRoutes(
  deps: CollectDeps & {
    embedKeys: EmbedKeyStore
    auth: AuthDeps
    reportAddress: (accountId: string) => Promise<string>
    now: () => Date
  },
) {
  const cache = new Map<string, { at: number; posture: Posture; checkedAt: string }>()
  const keyFor = async (value: string) => {
    const key = await deps.embedKeys.findLive(value)
    if (key === null) throw new FailureError({ code: 'not_found', resource: 'embed key' })
    return key
  }
  const cors = (key: EmbedKey, origin: string | null, set: { headers: Record<string, string | number> }) => {
    set.headers.vary = 'Origin'
    if (origin === null) return
    if (!originAllowed(key, origin)) {
      throw new FailureError({
        code: 'forbidden',
        message: `The origin ${origin} may not use this embed key.`,
      })
    }
    set.headers['access-control-allow-origin'] = origin
  }
  const widget = Bun.file(new URL('../embed/widget.js', import.meta.url).pathname)

  return new Elysia({ name: 'routes:embed-public', detail: { tags: ['Embed'] } })
    .use(apiModels)
    .use(authPlugin(deps.auth))
    .model({ EmbedScan: t.Object({ data: ScanModel }) })
    .get(
      '/api/embed/:embed_key/scan',
      async ({ params, query, request, set }) => {
        const key = await keyFor(params.embed_key)
        cors(key, request.headers.get('origin'), set)
        const checked = normalizeDomainName(query.domain)
        if (!checked.ok) {
          throw new FailureError({
            code: 'validation_failed',
            message: checked.reason,
            errors: { domain: [checked.reason] },
          })
        }
        const now = deps.now()
        const cacheKey = `${key.accountId}|${checked.name}`
        let entry = cache.get(cacheKey)
        if (entry === undefined || now.getTime() - entry.at > SCAN_CACHE_MS) {
          const findings = await collectFindings(deps, {
            domain: checked.name,
            configuredSelectors: [],
            learnedSelectors: [],
            now,
          })
          const posture = assessPosture(findings, { reportAddress: await deps.reportAddress(key.accountId) })
          entry = { at: now.getTime(), posture, checkedAt: now.toISOString() }
          cache.delete(cacheKey)
          cache.set(cacheKey, entry)
          if (cache.size > SCAN_CACHE_ENTRIES) cache.delete(cache.keys().next().value!)
        }
        set.headers['cache-control'] = 'public, max-age=300'
        const { posture } = entry
        return item({
          domain: posture.domain,
          grade: posture.grade,
          score: posture.score,
          dmarc_policy: posture.dmarcPolicy,
          areas: posture.areas,
          issues: posture.issues,
          checked_at: entry.checkedAt,
        })
      },
      {
        publicRateLimit: true,
        params: t.Object({ embed_key: IdText() }),
        query: t.Object({ domain: DomainText({ examples: ['example.com'] }) }),
        response: {
          200: 'EmbedScan',
          400: 'ValidationError',
          403: 'Error',
          404: 'Error',
          429: 'RateLimitError',
        },
        detail: {
          summary: 'Scan a domain for a third-party widget',
          // Public: no token (OpenAPI 3.1 §4.8.10.1, an empty list removes the requirement).
          security: [],
          description:
            'Public, no secret. 100 requests per minute per client IP. Answers CORS only for the key’s allowed origins.',
        },
      },
    )
    .options(
      '/api/embed/:embed_key/scan',
      async ({ params, request, set, status }) => {
        const key = await keyFor(params.embed_key)
        cors(key, request.headers.get('origin'), set)
        set.headers['access-control-allow-methods'] = 'GET, OPTIONS'
        set.headers['access-control-allow-headers'] = 'Accept, Content-Type'
        set.headers['access-control-max-age'] = '600'
        return status(204, undefined)
      },
      { detail: { hide: true } },
    )
    .get(
      '/embed/widget.js',
      ({ set }) => {
        set.headers['content-type'] = 'text/javascript; charset=utf-8'
        set.headers['cache-control'] = 'public, max-age=3600'
        set.headers['access-control-allow-origin'] = '*'
        return widget
      },
      { detail: { summary: 'The scanner widget script (dependency-free)' } },
    )
}
