import type { Static } from '@sinclair/typebox'
import { t } from 'elysia'
import { ResponseInt } from '../../plugins/api-models.ts'

// The policy and records of one aggregate report, as GET /domains/{name}/reports/{id} answers them
// and the dashboard shows them (docs/api.md). Stored as the parser wrote them
// (domain/reports/aggregate-types.ts: camelCase, JSON columns); presented here field by field in
// snake_case, the same for every JSON body of the API.

const text = t.Union([t.String(), t.Null()])

export const PolicyPublishedModel = t.Object(
  {
    domain: t.String(),
    adkim: text,
    aspf: text,
    p: text,
    sp: text,
    np: t.Union([t.String(), t.Null()], { description: 'RFC 9990: policy for non-existent subdomains' }),
    pct: t.Union([ResponseInt(), t.Null()]),
    fo: text,
    testing: t.Union([t.String(), t.Null()], { description: 'RFC 9990 `testing` (y/n)' }),
    discovery_method: t.Union([t.String(), t.Null()], {
      description: 'RFC 9990 `discovery_method` (psl or treewalk)',
    }),
  },
  { description: 'policy_published as the reporter wrote it (lower-cased, trimmed); null when absent' },
)

export const AggregateRecordModel = t.Object({
  source_ip: t.String(),
  count: ResponseInt(),
  disposition: t.String({ examples: ['none', 'quarantine', 'reject'] }),
  dkim_evaluated: t.Union([t.String(), t.Null()], {
    description: 'policy_evaluated: the reporter’s DKIM result',
  }),
  spf_evaluated: t.Union([t.String(), t.Null()], {
    description: 'policy_evaluated: the reporter’s SPF result',
  }),
  reasons: t.Array(t.Object({ type: t.String(), comment: text }), {
    description: 'Policy override reasons (forwarded, mailing_list, ...)',
  }),
  header_from: t.String(),
  envelope_from: text,
  envelope_to: text,
  dkim: t.Array(t.Object({ domain: t.String(), selector: text, result: t.String(), human_result: text })),
  spf: t.Array(
    t.Object({
      domain: t.String(),
      scope: t.Union([t.String(), t.Null()], { description: '`mfrom` or `helo`; null when not given' }),
      result: t.String(),
    }),
  ),
  dkim_aligned: t.Boolean(),
  spf_aligned: t.Boolean(),
  dmarc_pass: t.Boolean(),
})

type Row = Record<string, unknown>

/** A JSON column: parsed by the driver, or text when it came through as such. */
function json(value: unknown): unknown {
  if (typeof value !== 'string') return value
  try {
    return JSON.parse(value)
  } catch {
    return null
  }
}

const rowsOf = (value: unknown): Row[] => {
  const parsed = json(value)
  return Array.isArray(parsed) ? parsed.filter((v): v is Row => v !== null && typeof v === 'object') : []
}

const str = (value: unknown) => (value === null || value === undefined ? '' : String(value))
const orNull = (value: unknown) => (value === null || value === undefined ? null : String(value))

export function presentPolicyPublished(stored: unknown): Static<typeof PolicyPublishedModel> {
  const p = (json(stored) ?? {}) as Row
  const pct = p.pct === null || p.pct === undefined ? null : Number(p.pct)
  return {
    domain: str(p.domain),
    adkim: orNull(p.adkim),
    aspf: orNull(p.aspf),
    p: orNull(p.p),
    sp: orNull(p.sp),
    np: orNull(p.np),
    pct: pct !== null && Number.isInteger(pct) ? pct : null,
    fo: orNull(p.fo),
    testing: orNull(p.testing),
    discovery_method: orNull(p.discoveryMethod ?? p.discovery_method),
  }
}

/** A row of the report reader (AggregateReportReads, domain/reports/aggregate-reads.ts). */
export function presentAggregateRecord(row: Row): Static<typeof AggregateRecordModel> {
  return {
    source_ip: str(row.source_ip),
    count: Number(row.count ?? 0),
    disposition: str(row.disposition),
    dkim_evaluated: orNull(row.dkim_evaluated),
    spf_evaluated: orNull(row.spf_evaluated),
    reasons: rowsOf(row.reasons).map((r) => ({ type: str(r.type), comment: orNull(r.comment) })),
    header_from: str(row.header_from),
    envelope_from: orNull(row.envelope_from),
    envelope_to: orNull(row.envelope_to),
    dkim: rowsOf(row.dkim).map((d) => ({
      domain: str(d.domain),
      selector: orNull(d.selector),
      result: str(d.result),
      human_result: orNull(d.humanResult ?? d.human_result),
    })),
    spf: rowsOf(row.spf).map((s) => ({
      domain: str(s.domain),
      scope: orNull(s.scope),
      result: str(s.result),
    })),
    dkim_aligned: row.dkim_aligned === true,
    spf_aligned: row.spf_aligned === true,
    dmarc_pass: row.dmarc_pass === true,
  }
}
