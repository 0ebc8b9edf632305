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
    const chunk = `${'x'.repeat(CHUNK_CHARS)}<ip>10.0.0.${c}</ip><d>d${c}.example.org</d><s>s${c}</s><p>odd${c}</p>`
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
  expect(kept[7]!.ip).toBe('10.0.0.7')
  expect(retained).toBeGreaterThan(total / 2)
})

test('the rollup keeps copies of the source IPs, domains, selectors and unknown dispositions', () => {
  const { retained, kept: rollup } = retainedBy((values) => {
    const rollup = createRollupAccumulator()
    for (const v of values)
      rollup.add(
        aggregateRecord(v.ip, {
          disposition: v.disposition,
          dkim: [{ domain: v.domain, selector: v.selector, result: 'pass', humanResult: null }],
          spf: [{ domain: v.domain, scope: 'mfrom', result: 'pass' }],
        }),
        { dkimAligned: false, spfAligned: false, dmarcPass: false },
      )
    return rollup
  })
  const sources = [...rollup.sources()]
  expect(sources[7]).toMatchObject({
    sourceIp: '10.0.0.7',
    disposition: 'odd7',
    dkimDomains: ['d7.example.org'],
    spfDomains: ['d7.example.org'],
  })
  expect(rollup.selectors()).toContainEqual({ selector: 's7', signingDomain: 'd7.example.org', messages: 1 })
  expect(retained).toBeLessThan(total / 10)
})

test('the organizational-domain cache keeps copies of its keys and answers', () => {
  const { retained, kept: organizational } = retainedBy((values) => {
    const organizational = publicSuffixOrganizationalDomain()
    for (const v of values) expect(organizational(v.domain)).toBe('example.org')
    return organizational
  })
  expect(organizational('d7.example.org')).toBe('example.org')
  expect(retained).toBeLessThan(total / 10)
})
