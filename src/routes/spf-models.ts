import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { enumOf, PageMeta, ResponseInt } from '../../plugins/api-models.ts'
import { DomainText, Int4Id, Line, MAX_DOMAIN_LENGTH } from '../../plugins/input-schemas.ts'

// OpenAPI models of the SPF management API (src/routes/spf.ts); presenters in spf-presenters.ts.

const SourceKind = enumOf(['include', 'a', 'mx', 'ip4', 'ip6'])

export const SourceInput = t.Object({
  kind: SourceKind,
  domain: t.Optional(
    t.String({
      maxLength: MAX_DOMAIN_LENGTH,
      description: 'For include, a and mx',
      examples: ['sendgrid.net'],
    }),
  ),
  network: t.Optional(
    t.String({
      maxLength: 100,
      description: 'For ip4 and ip6: an address or CIDR network',
      examples: ['192.0.2.0/24'],
    }),
  ),
  label: t.Optional(t.String({ maxLength: 100, examples: ['SendGrid'] })),
  service_id: t.Optional(
    t.String({ maxLength: 100, description: 'Sending-service catalog id', examples: ['sendgrid'] }),
  ),
})

const SourceModel = t.Object({
  ...SourceInput.properties,
  term: t.String({ description: 'The SPF term it is published as', examples: ['include:sendgrid.net'] }),
})

const ServiceModel = t.Nullable(t.Object({ id: t.String(), name: t.String() }))

const ConfigModel = t.Object({
  sources: t.Array(SourceModel),
  all: t.UnionEnum(['-all', '~all']),
  flatten: t.UnionEnum(['auto', 'always', 'never']),
})

const RecordsModel = t.Object({
  records: t.Array(
    t.Object({
      name: t.String({ examples: ['example-com.spf.dmarcwatch.example'] }),
      text: t.String({ description: 'The TXT record served at the name' }),
      strings: t.Array(t.String(), { description: 'The same text cut into ≤ 255-byte strings' }),
    }),
    { description: 'The hosted name first, then chained `_spfN.<hosted>` records' },
  ),
  lookups: t.Integer({ description: 'DNS lookups evaluating the hosted name costs' }),
  flattened: t.Boolean(),
  networks: t.Integer(),
  caveats: t.Array(t.String()),
})

export const PublishModel = t.Object(
  {
    record: t.String({ examples: ['v=spf1 include:example-com.spf.dmarcwatch.example -all'] }),
    changed: t.Boolean({ description: 'false: the published record is already this one' }),
    lookups: t.Integer({ description: 'DNS-querying terms of the record itself' }),
    note: t.Nullable(t.String()),
  },
  { description: 'The SPF record to publish at the domain itself' },
)

export const ManagementModel = t.Object({
  hosted_name: t.String({ examples: ['example-com.spf.dmarcwatch.example'] }),
  include: t.String({ examples: ['include:example-com.spf.dmarcwatch.example'] }),
  version: t.Integer(),
  activated_at: t.String({ format: 'date-time' }),
  planned_at: t.String({ format: 'date-time' }),
  config: ConfigModel,
  served: RecordsModel,
  publish: PublishModel,
})

/** One record of the include tree (domain/spf/analysis.ts), its includes and redirect as children. */
export const IncludeTreeNodeModel = Type.Recursive(
  (Self) =>
    t.Object({
      domain: t.String(),
      via: enumOf(['root', 'include', 'redirect']),
      term: t.Union([t.String(), t.Null()], { description: 'The include/redirect term; null for the root' }),
      status: enumOf([
        'ok',
        'none',
        'multiple_records',
        'syntax_error',
        'dns_error',
        'loop',
        'truncated',
        'invalid_name',
      ]),
      record: t.Union([t.String(), t.Null()]),
      reason: t.Union([t.String(), t.Null()]),
      lookups: ResponseInt({ description: 'DNS-querying terms of this record itself (RFC 7208 §4.6.4)' }),
      branch_lookups: ResponseInt({ description: 'This record and everything below it' }),
      void_lookups: ResponseInt({ description: 'Worst case over IPv4 and IPv6 clients, for this branch' }),
      children: t.Array(Self),
    }),
  { $id: 'SpfIncludeNode' },
)

export const PublishedModel = t.Object({
  status: t.UnionEnum(['ok', 'none', 'permerror', 'temperror']),
  record: t.Nullable(t.String()),
  reason: t.Nullable(t.String()),
  lookups: t.Integer(),
  lookup_limit: t.Integer(),
  void_lookups: t.Integer(),
  void_lookup_limit: t.Integer(),
  warnings: t.Array(
    t.Object({
      code: t.String(),
      severity: t.UnionEnum(['error', 'warning', 'info']),
      domain: t.String(),
      term: t.Optional(t.String()),
      message: t.String(),
    }),
  ),
  include_tree: IncludeTreeNodeModel,
})

export const ProposalModel = t.Object({
  source: SourceModel,
  service: ServiceModel,
  ips: t.Array(t.String()),
  messages: t.Integer(),
  spf_failing: t.Integer({ description: 'Messages of these IPs that were not SPF-aligned' }),
  dmarc_pass: t.Integer(),
})

const DiffModel = t.Object({
  added: t.Array(SourceModel),
  removed: t.Array(SourceModel),
  settings: t.Array(t.UnionEnum(['all', 'flatten'])),
})

export const VersionModel = t.Object({
  version: t.Integer(),
  current: t.Boolean(),
  reason: t.String(),
  actor: t.String({ description: '`user:<id>` or `system`' }),
  created_at: t.String({ format: 'date-time' }),
  config: ConfigModel,
  served: RecordsModel,
  changes: DiffModel,
})

/** Request bodies that may be left out entirely (used inline, as `t.Optional`). */
export const ActivateBody = t.Object({
  sources: t.Optional(
    t.Array(SourceInput, {
      maxItems: 100,
      description: 'Default: the include/a/mx/ip4/ip6 terms of the published record',
    }),
  ),
  all: t.Optional(enumOf(['-all', '~all'], "Default: '~all' if published so, else '-all'")),
  flatten: t.Optional(enumOf(['auto', 'always', 'never'], 'Default: auto')),
})

export const AddSourceBody = t.Object({
  include: t.Optional(
    DomainText({ description: 'Authorise this include instead', examples: ['sendgrid.net'] }),
  ),
  network: t.Optional(
    Line({
      maxLength: 100,
      description: 'Authorise this network (holding the IP) instead',
      examples: ['192.0.2.0/24'],
    }),
  ),
})

const data = <T extends Parameters<typeof t.Object>[0]>(value: T) => t.Object({ data: t.Object(value) })

/** What a change did through a connected DNS provider (docs/spf-management.md). */
const ProviderSyncModel = t.Nullable(
  t.Object(
    {
      status: t.UnionEnum(['written', 'proposed', 'failed'], {
        description:
          'written: through the connected DNS provider (automatic); proposed: stored as a proposal with its diff (assisted; POST /domains/{name}/spf/proposals/{proposal_id}/approve writes it); failed: the previous record is in place',
      }),
      write_id: t.Nullable(t.String({ format: 'uuid' })),
      proposal_id: t.Nullable(
        t.Integer({ description: 'The stored proposal (GET /domains/{name}/spf/proposals)' }),
      ),
      verified: t.Boolean({ description: 'read back from the provider and over DNS' }),
      error: t.Nullable(t.String()),
      before: t.Nullable(t.Array(t.String())),
      after: t.Nullable(t.Array(t.String())),
      diff: t.Nullable(
        t.Object({
          added: t.Array(t.String()),
          removed: t.Array(t.String()),
          ttl: t.Nullable(t.Object({ before: t.Nullable(t.Integer()), after: t.Nullable(t.Integer()) })),
        }),
      ),
    },
    {
      description:
        'What was done through a connected DNS provider holding the zone; null: none holds it, manual, or nothing to change',
    },
  ),
)

/** The route-level models, registered with `.model()` so OpenAPI names them. */
export const SPF_MODELS = {
  SpfRecord: data({
    domain: t.String(),
    verified: t.Boolean(),
    automation_level: t.UnionEnum(['manual', 'assisted', 'automatic']),
    published: PublishedModel,
    managed: t.Boolean(),
    management: t.Nullable(ManagementModel),
  }),
  SpfActivation: data({
    domain: t.String(),
    changed: t.Boolean({ description: 'false: already active with these settings; nothing written' }),
    activated: t.Boolean({ description: 'true on the first activation (sends spf.activated)' }),
    management: ManagementModel,
    provider: ProviderSyncModel,
  }),
  SpfSourceAdded: data({
    domain: t.String(),
    source: t.Object(SourceInput.properties),
    service: t.Nullable(t.Object({ id: t.String(), name: t.String() })),
    changed: t.Boolean({ description: 'false: already authorised; nothing written' }),
    managed: t.Boolean(),
    publish: PublishModel,
    management: t.Nullable(ManagementModel),
    provider: ProviderSyncModel,
  }),
  SpfDetection: data({
    domain: t.String(),
    period: t.Object({ from: t.String({ format: 'date' }), days: t.Integer() }),
    automation_level: t.UnionEnum(['manual', 'assisted', 'automatic']),
    applied: t.Boolean({ description: 'true: applied as a new version (automatic, managed domains)' }),
    proposals: t.Array(ProposalModel),
    management: t.Nullable(ManagementModel),
    provider: ProviderSyncModel,
  }),
  SpfVersionList: t.Object({ data: t.Array(VersionModel), meta: PageMeta }),
  SpfRollback: t.Object({ version: Int4Id({ description: 'The version to restore' }) }),
  SpfRolledBack: data({
    domain: t.String(),
    changed: t.Boolean({ description: 'false: that version is what is served already' }),
    management: ManagementModel,
  }),
}
