import { heapStats } from 'bun:jsc'
import { expect, test } from 'bun:test'
import { publicSuffixOrganizationalDomain } from '../../../domain/reports/alignment.ts'
import { createRollupAccumulator } from '../../../domain/reports/report-rollup.ts'
import { aggregateRecord } from '../../support/aggregate-records.ts'

// Parsed values are slices that share their chunk's storage (domain/reports/aggregate/xml-text.ts),
// so whatever outlives a record keeps copies: the rollup (source IPs, evidence domains, selectors,
// unknown dispositions) and the process-wide organizational-domain cache. Each chunk below holds
// one record's values; what is measured is the string memory still alive once only the keeper is.

const CHUNKS = 20
const CHUNK_CHARS = 200_000
const total = CHUNKS * CHUNK_CHARS

interface Values {
  ip: string
  domain: string
  selector: string
  disposition: string
}

/** Values sliced out of 20 large chunks, as the tokenizer reads them. */
function valuesInChunks(): Values[] {
  return Array.from({ length: CHUNKS }, (_, c) => {
    // Values longer than 12 characters: shorter slices are copied by JSC when they become a Map key,
    // which would hide a missing copy.
    const chunk = `${'x'.repeat(CHUNK_CHARS)}<ip>192.168.100.${100 + c}</ip><d>mail-${c}.example.org</d><s>selector-${c}-2024</s><p>unknown-disposition-${c}</p>`
    const value = (tag: string) => {
      const start = chunk.indexOf(`<${tag}>`) + tag.length + 2
      return chunk.slice(start, chunk.indexOf(`</${tag}>`, start))
    }
    return { ip: value('ip'), domain: value('d'), selector: value('s'), disposition: value('p') }
  })
}

/** String memory still alive after `keeper` took the values, with only what it returned kept. */
function retainedBy<T>(keeper: (values: Values[]) => T): { retained: number; kept: T } {
  Bun.gc(true)
  const before = heapStats().extraMemorySize
  const kept = keeper(valuesInChunks())
  Bun.gc(true)
  return { retained: heapStats().extraMemorySize - before, kept }
}

test('the measure sees chunks kept alive (control: the plain values)', () => {
  const { retained, kept } = retainedBy((values) => values)
  expect(kept[7]!.ip).toBe('192.168.100.107')
  expect(retained).toBeGreaterThan(total / 2)
})

test('the rollup keeps copies of the source IPs, domains, selectors and unknown dispositions', () => {
  const { retained, kept: rollup } = retainedBy((values) => {
    const rollup = createRollupAccumulator()
    for (const v of values) {
      const record = aggregateRecord(v.ip, {
        disposition: v.disposition,
        dkim: [{ domain: v.domain, selector: v.selector, result: 'pass', humanResult: null }],
        spf: [{ domain: v.domain, scope: 'mfrom', result: 'pass' }],
      })
      rollup.add(record, { dkimAligned: false, spfAligned: false, dmarcPass: false })
      // A second row of the same IP (another alignment): stored without going through the Map.
      rollup.add(record, { dkimAligned: true, spfAligned: false, dmarcPass: true })
    }
    return rollup
  })
  const sources = [...rollup.sources()]
  expect(sources).toHaveLength(2 * CHUNKS)
  expect(sources.filter((s) => s.sourceIp === '192.168.100.107')).toHaveLength(2)
  expect(sources.find((s) => s.sourceIp === '192.168.100.107')).toMatchObject({
    disposition: 'unknown-disposition-7',
    dkimDomains: ['mail-7.example.org'],
    spfDomains: ['mail-7.example.org'],
  })
  expect(rollup.selectors()).toContainEqual({
    selector: 'selector-7-2024',
    signingDomain: 'mail-7.example.org',
    messages: 2,
  })
  expect(retained).toBeLessThan(total / 10)
})

test('the organizational-domain cache keeps copies of its keys and answers', () => {
  const { retained, kept: organizational } = retainedBy((values) => {
    const organizational = publicSuffixOrganizationalDomain()
    for (const v of values) expect(organizational(v.domain)).toBe('example.org')
    return organizational
  })
  expect(organizational('mail-7.example.org')).toBe('example.org')
  expect(retained).toBeLessThan(total / 10)
})
