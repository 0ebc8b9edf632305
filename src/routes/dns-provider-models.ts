import type { Static } from '@sinclair/typebox'
import { t } from 'elysia'
import { PROVIDER_KINDS, TSIG_ALGORITHMS, visibleSettings } from '../../domain/dns-providers/credentials.ts'
import type { DomainImport } from '../../domain/dns-providers/imports.ts'
import { MAX_IMPORT_ZONES } from '../../domain/dns-providers/imports.ts'
import type { RecordSet } from '../../domain/dns-providers/ports.ts'
import { WRITABLE_TYPES } from '../../domain/dns-providers/record-set.ts'
import type { Connection } from '../../domain/dns-providers/use-cases.ts'
import { diffSets, type Plan, type ProviderWrite } from '../../domain/dns-providers/writes.ts'
import { enumOf, JsonObject, PageMeta } from '../../plugins/api-models.ts'
import { DomainText, Line } from '../../plugins/input-schemas.ts'

// OpenAPI models and presenters of the DNS providers API (src/routes/dns-providers.ts, docs/api.md).

const iso = (date: Date | null) => date?.toISOString() ?? null

/**
 * What may be shown of a connection (domain/dns-providers/credentials.ts), one shape per provider;
 * never the key, token or TSIG secret. Listed most fields first: a response keeps the fields of
 * the first shape the settings match.
 */
const SettingsModel = t.Union(
  [
    t.Object(
      {
        server: t.String({ description: 'host, host:port or [v6]:port of the primary' }),
        zones: t.Array(t.String()),
        key_name: t.String(),
        key_algorithm: enumOf(TSIG_ALGORITHMS),
        transport: enumOf(['tcp', 'udp']),
      },
      { title: 'rfc2136' },
    ),
    t.Object({ base_url: t.String(), server_id: t.String() }, { title: 'powerdns' }),
    t.Object(
      {
        base_url: t.Union([t.String(), t.Null()], { description: 'null: Cloudflare’s own API' }),
        account_id: t.Union([t.String(), t.Null()], { description: 'Set for account-owned tokens' }),
      },
      { title: 'cloudflare' },
    ),
    // Settings stored in a shape none of the above has (an older version's) are still shown.
    JsonObject({ title: 'other' }),
  ],
  { description: 'What may be shown of the connection’s settings; never the key, token or TSIG secret' },
)

const ConnectionModel = t.Object({
  id: t.String({ format: 'uuid' }),
  provider: enumOf(PROVIDER_KINDS),
  name: t.String({ examples: ['PowerDNS dns.example.com'] }),
  settings: SettingsModel,
  provider_account: t.Nullable(t.String({ description: 'Who the provider says the credentials belong to' })),
  created_at: t.String({ format: 'date-time' }),
  last_verified_at: t.String({ format: 'date-time' }),
})

export const AuthenticateBody = t.Object({
  provider: enumOf(PROVIDER_KINDS),
  credentials: t.Record(t.String(), t.Unknown(), {
    description:
      'PowerDNS: `base_url`, `api_key`, `server_id?`. Cloudflare: `api_token`, `account_id?` (account-owned tokens), `base_url?`. RFC 2136: `server` (host[:port]), `zones` (list), `key_name`, `key_secret` (base64), `key_algorithm?` (hmac-sha256), `transport?` (tcp|udp).',
    examples: [{ base_url: 'https://dns.example.com:8081', api_key: 'secret' }],
  }),
  name: t.Optional(Line({ maxLength: 100, description: 'A label for the connection' })),
})

export const ImportBody = t.Object({
  zones: t.Optional(
    t.Array(Line({ minLength: 1, maxLength: 253 }), {
      minItems: 1,
      maxItems: MAX_IMPORT_ZONES,
      description: 'The zones to import (default: every zone the credentials can manage)',
    }),
  ),
})

const RecordSetModel = t.Object({
  name: t.String({ examples: ['_dmarc.example.com'] }),
  type: t.String({ examples: ['TXT'] }),
  ttl: t.Integer(),
  values: t.Array(t.String(), { examples: [['v=DMARC1; p=none']] }),
})

export const WriteBody = t.Object({
  domain: DomainText({ examples: ['example.com'], description: 'A verified domain of the account' }),
  name: DomainText({
    examples: ['_dmarc.example.com'],
    description: 'The domain or a name under it, fully qualified',
  }),
  type: enumOf(WRITABLE_TYPES),
  values: t.Array(Line({ maxLength: 65_535 }), { minItems: 1, maxItems: 100 }),
  ttl: t.Optional(t.Integer({ minimum: 1, maximum: 2 ** 31 - 1, description: 'Seconds (default 3600)' })),
  dry_run: t.Optional(t.Boolean({ description: 'Only answer the diff; write nothing' })),
})

export const WriteModel = t.Object({
  id: t.Nullable(t.String({ format: 'uuid', description: 'Null for a dry run or when nothing changes' })),
  domain: t.String(),
  provider: enumOf(PROVIDER_KINDS),
  connection_id: t.Nullable(t.String({ format: 'uuid' })),
  zone: t.String(),
  name: t.String(),
  type: t.String(),
  dry_run: t.Boolean(),
  changed: t.Boolean(),
  before: t.Nullable(RecordSetModel),
  after: t.Nullable(RecordSetModel),
  diff: t.Object({
    added: t.Array(t.String()),
    removed: t.Array(t.String()),
    ttl: t.Nullable(t.Object({ before: t.Nullable(t.Integer()), after: t.Nullable(t.Integer()) })),
  }),
  status: enumOf(['planned', 'unchanged', 'applied', 'verified', 'failed', 'rolled_back']),
  error: t.Nullable(t.String()),
  actor: t.Nullable(t.String({ examples: ['user:3f0c…', 'system'] })),
  created_at: t.Nullable(t.String({ format: 'date-time' })),
  applied_at: t.Nullable(t.String({ format: 'date-time' })),
  verified_at: t.Nullable(t.String({ format: 'date-time' })),
  rolled_back_at: t.Nullable(t.String({ format: 'date-time' })),
})

const ImportResultModel = t.Object({
  zone: t.String(),
  domain: t.Nullable(t.String()),
  status: enumOf(['imported', 'skipped', 'failed']),
  reason: t.Nullable(t.String({ examples: ['exists'] })),
  verified: t.Boolean(),
})

const ImportModel = t.Object({
  id: t.String({ format: 'uuid' }),
  connection_id: t.String({ format: 'uuid' }),
  provider: enumOf(PROVIDER_KINDS),
  status: enumOf(['queued', 'running', 'done', 'failed']),
  zones: t.Nullable(t.Array(t.String(), { description: 'The zones asked for; null: all of them' })),
  total: t.Nullable(t.Integer({ description: 'Zones to handle, once the provider listed them' })),
  counts: t.Object({
    imported: t.Integer(),
    skipped: t.Integer(),
    failed: t.Integer(),
    pending: t.Nullable(t.Integer()),
  }),
  results: t.Array(ImportResultModel),
  error: t.Nullable(t.String()),
  created_at: t.String({ format: 'date-time' }),
  started_at: t.Nullable(t.String({ format: 'date-time' })),
  finished_at: t.Nullable(t.String({ format: 'date-time' })),
})

export const ProviderErrorModel = t.Object(
  {
    error: t.Literal('dns_provider_error'),
    message: t.String(),
    provider: enumOf(PROVIDER_KINDS),
    kind: enumOf([
      'bad_credentials',
      'forbidden',
      'rate_limited',
      'not_found',
      'conflict',
      'unavailable',
      'invalid',
    ]),
    retry_after: t.Optional(
      t.Integer({ description: 'Seconds, when the provider said (it was rate limiting)' }),
    ),
    write_id: t.Optional(t.String({ format: 'uuid', description: 'The write recorded as failed' })),
  },
  { description: 'Status 502: the DNS provider failed (unreachable, rate limiting, refusing the data)' },
)

export const DNS_PROVIDER_MODELS = {
  DnsProviderError: ProviderErrorModel,
  DnsProviderConnection: ConnectionModel,
  DnsProviderConnectionItem: t.Object({ data: ConnectionModel }),
  DnsProviderConnectionList: t.Object({ data: t.Array(ConnectionModel), meta: PageMeta }),
  DnsProviderAuthenticate: AuthenticateBody,
  DnsProviderImport: ImportModel,
  DnsProviderImportItem: t.Object({ data: ImportModel }),
  DnsProviderImportRequest: ImportBody,
  DnsProviderWrite: WriteModel,
  DnsProviderWriteItem: t.Object({ data: WriteModel }),
  DnsProviderWriteList: t.Object({ data: t.Array(WriteModel), meta: PageMeta }),
  DnsProviderWriteRequest: WriteBody,
}

export function presentConnection(c: Connection) {
  return {
    id: c.id,
    provider: c.provider,
    name: c.name,
    settings: visibleSettings(c.settings) as Static<typeof SettingsModel>,
    provider_account: c.providerAccount,
    created_at: c.createdAt.toISOString(),
    last_verified_at: c.lastVerifiedAt.toISOString(),
  }
}

export function presentImport(i: DomainImport) {
  const done = i.imported + i.skipped + i.failed
  return {
    id: i.id,
    connection_id: i.connectionId,
    provider: i.provider,
    status: i.status,
    zones: i.zonesRequested,
    total: i.total,
    counts: {
      imported: i.imported,
      skipped: i.skipped,
      failed: i.failed,
      pending: i.total === null ? null : Math.max(0, i.total - done),
    },
    results: i.results,
    error: i.error,
    created_at: i.createdAt.toISOString(),
    started_at: iso(i.startedAt),
    finished_at: iso(i.finishedAt),
  }
}

const presentSet = (set: RecordSet | null) => (set === null ? null : { ...set, values: [...set.values] })

/** A plan that was not written: the dry run, or an apply that had nothing to change. */
export function presentPlan(plan: Plan, dryRun: boolean) {
  return {
    id: null,
    domain: plan.domain,
    provider: plan.target.connection.provider,
    connection_id: plan.target.connection.id,
    zone: plan.target.zone.name,
    name: plan.after.name,
    type: plan.after.type,
    dry_run: dryRun,
    changed: plan.changed,
    before: presentSet(plan.before),
    after: presentSet(plan.after),
    diff: diffSets(plan.before, plan.after),
    status: dryRun ? ('planned' as const) : ('unchanged' as const),
    error: null,
    actor: null,
    created_at: null,
    applied_at: null,
    verified_at: null,
    rolled_back_at: null,
  }
}

export function presentWrite(w: ProviderWrite) {
  return {
    id: w.id,
    domain: w.domain,
    provider: w.provider,
    connection_id: w.connectionId,
    zone: w.zone.name,
    name: w.name,
    type: w.type,
    dry_run: false,
    changed: true,
    before: presentSet(w.before),
    after: presentSet(w.after),
    diff: diffSets(w.before, w.after),
    status: w.status,
    error: w.error,
    actor: w.actor,
    created_at: w.createdAt.toISOString(),
    applied_at: iso(w.appliedAt),
    verified_at: iso(w.verifiedAt),
    rolled_back_at: iso(w.rolledBackAt),
  }
}
