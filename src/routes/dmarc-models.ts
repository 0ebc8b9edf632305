import { t } from 'elysia'
import type { DmarcDiscovery } from '../../domain/dmarc/discovery.ts'
import { type HostedDmarcView, MAX_HOSTED_RECORD, type PolicyLevel } from '../../domain/dmarc/hosting.ts'
import type { Delegation, HostingResult } from '../../domain/dmarc/hosting-use-cases.ts'
import type { PolicyChange } from '../../domain/policy/ports.ts'
import type { ProgressionDecision } from '../../domain/policy/progression.ts'
import type { AppliedResult, ProgressionView } from '../../domain/policy/use-cases.ts'
import { Line } from '../../plugins/input-schemas.ts'
import { presentReadiness } from './source-models.ts'

// OpenAPI models and presenters of the hosted DMARC and policy progression API (src/routes/dmarc.ts).

const Policy = t.UnionEnum(['none', 'quarantine', 'reject'])
const LevelModel = t.Object({
  policy: Policy,
  pct: t.Nullable(t.Integer({ description: 'pct as written; null when the tag is absent (all mail)' })),
})
const iso = (date: Date | null) => (date === null ? null : date.toISOString())
const level = (l: PolicyLevel) => ({ policy: l.policy, pct: l.pct })

const HostedModel = t.Object({
  name: t.String({ examples: ['example-com._dmarc.spf.dmarcwatch.example'] }),
  record: t.String({ examples: ['v=DMARC1; p=none; rua=mailto:k3y@dmarcwatch.example'] }),
  ...LevelModel.properties,
  updated_at: t.String({ format: 'date-time' }),
})
export const presentHosted = (h: HostedDmarcView) => ({
  name: h.name,
  record: h.record,
  ...level(h),
  updated_at: h.updatedAt.toISOString(),
})

const CnameModel = t.Object({
  name: t.String({ examples: ['_dmarc.example.com'] }),
  type: t.Literal('CNAME'),
  target: t.String({ examples: ['example-com._dmarc.spf.dmarcwatch.example'] }),
  record: t.String({ examples: ['_dmarc.example.com. IN CNAME example-com._dmarc.spf.dmarcwatch.example.'] }),
})

const DelegationModel = t.Object({
  name: t.String({ examples: ['_dmarc.example.com'] }),
  target: t.Nullable(t.String({ description: 'The hosted name to point at; null when not hosted' })),
  current: t.Nullable(t.String({ description: 'What _dmarc.<domain> is a CNAME to now' })),
  pointed: t.Nullable(t.Boolean({ description: 'current is target; null when DNS failed or not hosted' })),
})
export const presentDelegation = (d: Delegation) => ({ ...d })

const FindingModel = t.Object({ code: t.String(), severity: t.String(), message: t.String() })
const PublishedModel = t.Object({
  record: t.Nullable(t.String({ description: 'The record that applies, as found in DNS (through a CNAME)' })),
  policy: t.UnionEnum(['none', 'quarantine', 'reject', 'missing']),
  policy_domain: t.Nullable(t.String()),
  role: t.Nullable(t.String({ description: 'author_domain, organizational_domain or public_suffix_domain' })),
  complete: t.Boolean({ description: 'false when a DNS failure may hide a record' }),
  findings: t.Array(FindingModel),
})
export const presentPublished = (d: DmarcDiscovery) => ({
  record: d.rawRecord,
  policy: d.appliedPolicy?.policy ?? ('missing' as const),
  policy_domain: d.policyDomain,
  role: d.policyRole,
  complete: d.complete,
  findings: [...d.findings, ...d.recordFindings].map(({ code, severity, message }) => ({
    code,
    severity,
    message,
  })),
})

const HostingModel = t.Object({
  domain: t.String(),
  changed: t.Boolean({ description: 'false: nothing was written' }),
  hosted: HostedModel,
  cname: CnameModel,
  warnings: t.Array(t.String()),
})
export const presentHosting = (r: HostingResult) => ({
  domain: r.domain,
  changed: r.changed,
  hosted: presentHosted(r.hosted),
  cname: { ...r.cname },
  warnings: r.warnings,
})

const ChangeModel = t.Object({
  id: t.Integer(),
  kind: t.UnionEnum(['advance', 'rollback', 'edit']),
  status: t.UnionEnum(['proposed', 'applied', 'withdrawn']),
  from: LevelModel,
  to: LevelModel,
  from_record: t.String(),
  to_record: t.String(),
  reason: t.String(),
  actor: t.String({ examples: ['system'] }),
  created_at: t.String({ format: 'date-time' }),
  applied_at: t.Nullable(t.String({ format: 'date-time' })),
  rolled_back: t.Boolean(),
  rolled_back_at: t.Nullable(t.String({ format: 'date-time' })),
})
export const presentChange = (c: PolicyChange) => ({
  id: c.id,
  kind: c.kind,
  status: c.status,
  from: level(c.from),
  to: level(c.to),
  from_record: c.fromRecord,
  to_record: c.toRecord,
  reason: c.reason,
  actor: c.actor,
  created_at: c.createdAt.toISOString(),
  applied_at: iso(c.appliedAt),
  rolled_back: c.rolledBackAt !== null,
  rolled_back_at: iso(c.rolledBackAt),
})

const DecisionModel = t.Object({
  action: t.UnionEnum(['advance', 'propose', 'hold', 'rollback']),
  kind: t.Nullable(t.UnionEnum(['advance', 'rollback'])),
  from: t.Nullable(Policy),
  to: t.Nullable(Policy),
  target: t.Nullable(LevelModel),
  reason: t.String({ examples: ['Not advancing to quarantine yet: 2 legitimate sources still fail DKIM.'] }),
  blockers: t.Array(t.String()),
  not_before: t.Nullable(t.String({ format: 'date', description: 'When waiting between steps' })),
})
const presentDecision = (d: ProgressionDecision) => ({
  action: d.action,
  kind: d.kind,
  from: d.from,
  to: d.to,
  target: d.target === null ? null : level(d.target),
  reason: d.reason,
  blockers: d.blockers,
  not_before: d.notBefore,
})

const ReadinessModel = t.Object({
  ready: t.Boolean(),
  next: t.Nullable(t.Object({ policy: t.String(), pct: t.Integer() })),
  pass_rate: t.Nullable(t.Number({ description: 'Percent over the last 14 days' })),
  messages: t.Integer(),
  dmarc_pass: t.Integer(),
  days: t.Integer({ description: 'Days of the 14-day window with report data' }),
  blockers: t.Array(t.String()),
})

const ProgressionModel = t.Object({
  domain: t.String(),
  verified: t.Boolean(),
  automation_level: t.UnionEnum(['manual', 'assisted', 'automatic']),
  hosted: t.Nullable(HostedModel),
  record: t.Nullable(
    t.Object(
      {
        home: t.UnionEnum(['hosted', 'provider']),
        record: t.String(),
        policy: Policy,
        pct: t.Nullable(t.Integer()),
      },
      {
        description:
          'The record a change replaces: the hosted one, or the `_dmarc` TXT a connected DNS provider holds (docs/policy-progression.md); null when neither',
      },
    ),
  ),
  pointed: t.Nullable(t.Boolean({ description: '_dmarc.<domain> is a CNAME to the hosted name' })),
  policy: t.UnionEnum(['none', 'quarantine', 'reject', 'missing']),
  readiness: ReadinessModel,
  decision: DecisionModel,
  pending: t.Nullable(ChangeModel),
  history: t.Array(ChangeModel, { description: 'Newest first, at most 50' }),
})
export const presentProgression = (v: ProgressionView) => ({
  domain: v.domain.name,
  verified: v.domain.verified,
  automation_level: v.domain.automationLevel,
  hosted: v.hosted === null ? null : presentHosted(v.hosted),
  record:
    v.inForce === null
      ? null
      : { home: v.inForce.home, record: v.inForce.record, policy: v.inForce.policy, pct: v.inForce.pct },
  pointed: v.pointed,
  policy: v.policy,
  readiness: presentReadiness(v.readiness),
  decision: presentDecision(v.decision),
  pending: v.pending === null ? null : presentChange(v.pending),
  history: v.history.map(presentChange),
})

const AppliedModel = t.Object({
  domain: t.String(),
  change: t.Object({
    kind: t.UnionEnum(['advance', 'rollback']),
    from: LevelModel,
    to: LevelModel,
    record: t.String({ description: 'The record now served' }),
    reason: t.String(),
  }),
})
export const presentApplied = (r: AppliedResult) => ({
  domain: r.domain,
  change: { ...r.change, from: level(r.change.from), to: level(r.change.to) },
})

const RecordInput = Line({
  minLength: 1,
  maxLength: MAX_HOSTED_RECORD,
  examples: ['v=DMARC1; p=none; rua=mailto:k3y@dmarcwatch.example'],
})

export const DMARC_MODELS = {
  DmarcState: t.Object({
    data: t.Object({
      domain: t.String(),
      verified: t.Boolean(),
      automation_level: t.UnionEnum(['manual', 'assisted', 'automatic']),
      published: PublishedModel,
      delegation: DelegationModel,
      cname: t.Nullable(CnameModel),
      hosted: t.Nullable(HostedModel),
    }),
  }),
  DmarcHosting: t.Object({ data: HostingModel }),
  DmarcHostBody: t.Object({ record: t.Optional(RecordInput) }),
  DmarcUpdateBody: t.Object({ record: RecordInput }),
  DmarcProgression: t.Object({ data: ProgressionModel }),
  DmarcPolicyApplied: t.Object({ data: AppliedModel }),
  DmarcProposalRejected: t.Object({ data: t.Object({ domain: t.String(), rejected: ChangeModel }) }),
  DmarcRollbackBody: t.Object({ reason: t.Optional(Line({ maxLength: 500 })) }),
}
