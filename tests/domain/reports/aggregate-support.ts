// Helpers for the aggregate parser tests: fixture paths, chunking, and collecting events while
// checking their order (metadata once, before any record; an error only last).

import { expect } from 'bun:test'
import { Glob } from 'bun'
import type {
  AggregateEvent,
  AggregateMetadata,
  AggregateParseError,
  AggregateRecord,
} from '../../../domain/reports/aggregate-types.ts'

export const FIXTURES = new URL('../../fixtures/dmarc-aggregate/', import.meta.url).pathname

/** Every XML sample, relative to FIXTURES, sorted. */
export const xmlFixtures = (): string[] => [...new Glob('**/*.xml').scanSync(FIXTURES)].sort()

export const fixtureBytes = (path: string): Promise<Uint8Array> => Bun.file(FIXTURES + path).bytes()

export interface Parsed {
  metadata: AggregateMetadata | null
  records: AggregateRecord[]
  error: AggregateParseError | null
  events: AggregateEvent[]
}

export async function collect(events: AsyncIterable<AggregateEvent>): Promise<Parsed> {
  const parsed: Parsed = { metadata: null, records: [], error: null, events: [] }
  for await (const event of events) {
    expect(parsed.error).toBeNull()
    parsed.events.push(event)
    if (event.type === 'metadata') {
      expect(parsed.metadata).toBeNull()
      parsed.metadata = event.metadata
    } else if (event.type === 'record') {
      expect(parsed.metadata).not.toBeNull()
      parsed.records.push(event.record)
    } else parsed.error = event.error
  }
  return parsed
}

/** The bytes cut into pieces of the given sizes, repeated (so boundaries fall anywhere). */
export function* pieces(bytes: Uint8Array, sizes: (index: number) => number): Generator<Uint8Array> {
  let at = 0
  for (let i = 0; at < bytes.length; i++) {
    const size = Math.max(1, sizes(i))
    yield bytes.slice(at, at + size)
    at += size
  }
}

/** A deterministic pseudo-random source, so a failing chunking can be reproduced. */
export function seeded(seed: number): (n: number) => number {
  let state = seed >>> 0
  return (n) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state % n
  }
}

export async function* asAsync(chunks: Iterable<Uint8Array | string>): AsyncGenerator<Uint8Array | string> {
  for (const chunk of chunks) yield chunk
}

export const utf8 = (text: string) => new TextEncoder().encode(text)

/** A complete one-record report; `record` replaces the record, `head` goes before <feedback>. */
export function report(
  options: { record?: string; head?: string; metadata?: string; attributes?: string } = {},
): string {
  const metadata =
    options.metadata ??
    `<report_metadata><org_name>Example</org_name><report_id>r1</report_id>
  <date_range><begin>1700000000</begin><end>1700086400</end></date_range></report_metadata>
  <policy_published><domain>example.com</domain><p>none</p></policy_published>`
  const record =
    options.record ??
    `<record><row><source_ip>192.0.2.1</source_ip><count>3</count>
  <policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>fail</spf></policy_evaluated></row>
  <identifiers><header_from>example.com</header_from></identifiers>
  <auth_results><dkim><domain>example.com</domain><result>pass</result></dkim>
  <spf><domain>example.com</domain><result>fail</result></spf></auth_results></record>`
  return `${options.head ?? ''}<feedback${options.attributes ?? ''}>${metadata}${record}</feedback>`
}
