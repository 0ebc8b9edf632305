import { expect, test } from 'bun:test'
import { createSaxesTokenizer } from '../../../domain/reports/aggregate/saxes-tokenizer.ts'
import { parseAggregateReport, parseAggregateReportWith } from '../../../domain/reports/aggregate-parser.ts'
import { collect, report, utf8 } from './aggregate-support.ts'

// A report's format follows the namespace of its <feedback> element (RFC 9990 Appendix A), read as
// an XML reader does (Namespaces in XML 1.0 §6.2): the default namespace for an unprefixed
// <feedback>, its prefix's for a prefixed one, declared on it or on an element around it. A prefix
// declared beside an unprefixed <feedback> names nothing: a real AOL report (cry-inc/dmarc-report-
// viewer's testdata/dmarc-reports/aol.xml) carries xmlns:ns1 for the draft's namespace that way and
// was labelled "draft".

const DRAFT = 'http://dmarc.org/dmarc-xml/0.1'
const RFC9990 = 'urn:ietf:params:xml:ns:dmarc-2.0'

async function variantOf(xml: string) {
  const ours = await collect(parseAggregateReport([utf8(xml)]))
  const reference = await collect(parseAggregateReportWith(createSaxesTokenizer, [utf8(xml)]))
  expect(ours.error).toBeNull()
  expect(reference.metadata?.variant).toBe(ours.metadata!.variant)
  return ours.metadata!.variant
}

const prefixed = (prefix: string, attributes = '') =>
  report()
    .replace('<feedback>', `<${prefix}:feedback${attributes}>`)
    .replace('</feedback>', `</${prefix}:feedback>`)

test('an unprefixed <feedback> is in the default namespace, not in one a prefix names', async () => {
  const aol = ` xmlns:xsi='http://www.w3.org/2001/XMLSchema-instance' xmlns:ns1='${DRAFT}' xsi:schemaLocation='${DRAFT} x.xsd'`
  expect(await variantOf(report({ attributes: aol }))).toBe('rfc7489')
  expect(await variantOf(report({ attributes: ` xmlns="${DRAFT}"` }))).toBe('draft')
  expect(await variantOf(report({ attributes: ` xmlns:d="${DRAFT}" xmlns='${RFC9990}'` }))).toBe('rfc9990')
})

test('a prefixed <feedback> is in its prefix’s namespace, declared on it or around it', async () => {
  expect(await variantOf(prefixed('d', ` xmlns:d="${DRAFT}"`))).toBe('draft')
  expect(await variantOf(prefixed('d', ` xmlns="${DRAFT}" xmlns:d="${RFC9990}"`))).toBe('rfc9990')
  expect(await variantOf(`<wrap xmlns:d="${RFC9990}">${prefixed('d')}</wrap>`)).toBe('rfc9990')
  // A prefix nobody declared: no namespace, so the version and the elements decide.
  expect(await variantOf(prefixed('d'))).toBe('rfc7489')
})

test('a declaration is in scope only inside the element that makes it', async () => {
  // On a sibling that closed before <feedback>: out of scope.
  expect(await variantOf(`<wrap><a xmlns="${RFC9990}"/>${report()}</wrap>`)).toBe('rfc7489')
  expect(await variantOf(`<wrap xmlns:d="${RFC9990}"><y xmlns:d="${DRAFT}"/>${prefixed('d')}</wrap>`)).toBe(
    'rfc9990',
  )
  // The innermost declaration of a prefix wins.
  expect(
    await variantOf(`<wrap xmlns:d="${DRAFT}"><inner xmlns:d="${RFC9990}">${prefixed('d')}</inner></wrap>`),
  ).toBe('rfc9990')
})
