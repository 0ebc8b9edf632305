import { expect, test } from 'bun:test'
import { parseAggregateReport } from '../../../domain/reports/aggregate-parser.ts'
import { collect, FIXTURES, fixtureBytes } from './aggregate-support.ts'

// The mail-auth samples against that library's own parse (its .json files): its enum names are
// mapped back to the values reporters write, which is what we keep.

const ENUM_VALUES: Record<string, string | null> = {
  Unspecified: null,
  MailFrom: 'mfrom',
  Helo: 'helo',
  Relaxed: 'r',
  Strict: 's',
  TrustedForwarder: 'trusted_forwarder',
  MailingList: 'mailing_list',
  LocalPolicy: 'local_policy',
  SampledOut: 'sampled_out',
}
const value = (v: string | null | undefined) =>
  v == null ? null : v in ENUM_VALUES ? ENUM_VALUES[v]! : v.toLowerCase()

function expectedFrom(json: any) {
  const meta = json.report_metadata
  const policy = json.policy_published
  return {
    metadata: {
      orgName: meta.org_name,
      email: meta.email,
      extraContactInfo: meta.extra_contact_info ?? null,
      reportId: meta.report_id,
      begin: meta.date_range.begin,
      end: meta.date_range.end,
      errors: meta.error,
      policy: {
        domain: policy.domain,
        adkim: value(policy.adkim),
        aspf: value(policy.aspf),
        p: value(policy.p),
        sp: value(policy.sp),
        fo: policy.fo,
        ...('np' in policy ? { np: value(policy.np) } : {}),
        ...('discovery_method' in policy ? { discoveryMethod: value(policy.discovery_method) } : {}),
      },
    },
    records: json.record.map((r: any) => ({
      sourceIp: r.row.source_ip,
      count: r.row.count,
      disposition: value(r.row.policy_evaluated.disposition),
      dkimEvaluated: value(r.row.policy_evaluated.dkim),
      spfEvaluated: value(r.row.policy_evaluated.spf),
      reasons: r.row.policy_evaluated.reason.map((x: any) => ({ type: value(x.type_), comment: x.comment })),
      headerFrom: r.identifiers.header_from,
      // mail-auth writes '' for an absent envelope_from; we write null.
      envelopeFrom: r.identifiers.envelope_from || null,
      envelopeTo: r.identifiers.envelope_to,
      dkim: r.auth_results.dkim.map((d: any) => ({
        domain: d.domain,
        selector: d.selector,
        result: value(d.result),
        humanResult: d.human_result,
      })),
      spf: r.auth_results.spf.map((s: any) => ({
        domain: s.domain,
        scope: value(s.scope),
        result: value(s.result),
      })),
    })),
  }
}

for (const name of ['001', '002', '003', '004', '005']) {
  test(`stalwart-mail-auth/${name}.xml matches mail-auth's parse (${name}.json)`, async () => {
    const json = await Bun.file(`${FIXTURES}stalwart-mail-auth/${name}.json`).json()
    const parsed = await collect(parseAggregateReport([await fixtureBytes(`stalwart-mail-auth/${name}.xml`)]))
    expect(parsed.error).toBeNull()
    const expected = expectedFrom(json)
    if (name === '005') {
      // RFC 9990 dropped `sampled_out`, and mail-auth folds it into Other; we keep what was written.
      expect(parsed.records[0]!.reasons).toEqual([{ type: 'sampled_out', comment: 'legacy sampling' }])
      expected.records[0].reasons = [{ type: 'sampled_out', comment: 'legacy sampling' }]
    }
    expect(parsed.metadata).toMatchObject(expected.metadata)
    expect(parsed.records).toEqual(expected.records)
    // mail-auth reads `testing` as a boolean and the version as a number (0 when absent).
    expect(parsed.metadata!.policy.testing ?? 'n').toBe(json.policy_published.testing ? 'y' : 'n')
    expect(Number(parsed.metadata!.version ?? 0)).toBe(json.version)
  })
}
