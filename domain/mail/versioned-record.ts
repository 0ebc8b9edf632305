import type { DnsResolver } from '../dns/ports.ts'
import { txtValues } from '../dns/txt.ts'
import type { Finding, Severity } from '../shared/finding.ts'

// MTA-STS (RFC 8461 §3.1), TLS-RPT (RFC 8460 §3) and BIMI publish one TXT record that starts with a
// version tag: TXT records without it are discarded, and anything but exactly one left means the
// domain publishes none. One lookup for all three; each protocol brings its parser and wording.

/**
 * A tag-list field without the WSP around it (RFC 8461 §3.1, RFC 8460 §3: `*WSP` on both sides of
 * a field). A loop, not `/^[ \t]+|[ \t]+$/g`: the second branch is tried from every position of a
 * run of blanks, which is quadratic in a TXT record of any domain the public scanner is asked about.
 */
export function trimWsp(field: string): string {
  let start = 0
  let end = field.length
  while (start < end && (field[start] === ' ' || field[start] === '\t')) start++
  while (end > start && (field[end - 1] === ' ' || field[end - 1] === '\t')) end--
  return field.slice(start, end)
}

export type CommonCode = 'lookup_failed' | 'no_record' | 'multiple_records'

export type VersionedLookup<R, C extends string> =
  | { status: 'found'; name: string; record: R; findings: Finding<C>[] }
  | { status: 'none' | 'invalid' | 'temperror'; name: string; record: null; findings: Finding<C>[] }

export interface VersionedRecordSpec<R, C extends string> {
  /** What users call it in messages: `MTA-STS`, `TLS-RPT`, `BIMI`. */
  label: string
  isRecord: (text: string) => boolean
  /** A record that nearly starts right (case, spaces): parsed only to explain why it is ignored. */
  isNearMiss?: (text: string) => boolean
  parse: (
    text: string,
  ) => { ok: true; record: R; findings: Finding<C>[] } | { ok: false; findings: Finding<C>[] }
  noRecordSeverity: Severity
  /** Why several records count as none, from the point of view of the protocol's peers. */
  multipleConsequence: string
}

export async function lookupVersionedRecord<R, C extends string>(
  dns: DnsResolver,
  name: string,
  spec: VersionedRecordSpec<R, C>,
): Promise<VersionedLookup<R, C>> {
  const finding = (code: CommonCode, severity: Severity, message: string) => ({
    code: code as C,
    severity,
    message,
  })
  const answer = await dns.resolve(name, 'TXT')
  if (answer.status === 'timeout' || answer.status === 'error') {
    return {
      status: 'temperror',
      name,
      record: null,
      findings: [finding('lookup_failed', 'low', `The lookup of ${name} failed.`)],
    }
  }
  const texts = txtValues(answer)
  const records = texts.filter(spec.isRecord)
  if (records.length === 0) {
    const near = spec.isNearMiss === undefined ? undefined : texts.find(spec.isNearMiss)
    const findings = near === undefined ? [] : spec.parse(near).findings
    findings.push(finding('no_record', spec.noRecordSeverity, `No ${spec.label} record at ${name}.`))
    return { status: 'none', name, record: null, findings }
  }
  if (records.length > 1) {
    const message = `${name} has ${records.length} ${spec.label} records; ${spec.multipleConsequence}.`
    return { status: 'invalid', name, record: null, findings: [finding('multiple_records', 'high', message)] }
  }
  const parsed = spec.parse(records[0]!)
  return parsed.ok
    ? { status: 'found', name, record: parsed.record, findings: parsed.findings }
    : { status: 'invalid', name, record: null, findings: parsed.findings }
}
