// The same XmlTokenizer contract over saxes, a conformant XML parser: the reference our tokenizer
// is compared with (differential tests over every fixture, and the benchmark). Not used to ingest:
// it is several times slower (docs/decisions-aggregate-parser.md). It applies the same limits and
// refuses a DOCTYPE, but does no recovery: saxes rejects what XML rejects.

import { SaxesParser } from 'saxes'
import type { XmlLimits } from '../aggregate-types.ts'
import type { XmlText } from './xml-text.ts'
import type { XmlFailure, XmlSink, XmlTokenizer } from './xml-tokenizer.ts'

const localName = (qname: string) => qname.slice(qname.indexOf(':') + 1)

export function createSaxesTokenizer(sink: XmlSink, limits: XmlLimits): XmlTokenizer {
  const parser = new SaxesParser({ position: false })
  let failure: XmlFailure | null = null
  let stopped = false
  let elements = 0
  /** Per open element: no child element yet. */
  const leaf: boolean[] = []
  let text = ''
  let textLength = 0
  const done = () => stopped || failure !== null
  const limit = (message: string) => {
    failure = { code: 'limit_exceeded', message }
  }

  parser.on('error', (error) => {
    if (!done()) failure = { code: 'not_xml', message: error.message }
  })
  parser.on('doctype', () => {
    if (!done())
      failure = { code: 'not_xml', message: 'DOCTYPE declarations are refused (no DTD, no entity expansion)' }
  })
  parser.on('opentag', (tag) => {
    if (done()) return
    if (++elements > limits.maxElements) return limit(`more than ${limits.maxElements} elements`)
    if (leaf.length >= limits.maxDepth) return limit(`elements nested deeper than ${limits.maxDepth}`)
    if (leaf.length > 0) leaf[leaf.length - 1] = false
    text = ''
    textLength = 0
    leaf.push(true)
    const attributes = Object.entries(tag.attributes)
      .map(([name, value]) => ` ${name}="${value}"`)
      .join('')
    const colon = tag.name.indexOf(':')
    const prefix = colon === -1 ? '' : tag.name.slice(0, colon)
    if (!sink.open(localName(tag.name), attributes, prefix)) stopped = true
  })
  const onText = (chunk: string) => {
    if (done()) return
    textLength += chunk.length
    if (textLength > limits.maxTextLength)
      return limit(`text is longer than ${limits.maxTextLength} characters`)
    if (leaf[leaf.length - 1] === true) text += chunk
  }
  parser.on('text', onText)
  parser.on('cdata', onText)
  parser.on('closetag', (tag) => {
    if (done()) return
    const isLeaf = leaf.pop() === true
    const value: XmlText = { source: text, start: 0, end: text.length, decoded: true }
    text = ''
    textLength = 0
    if (!sink.close(localName(tag.name), isLeaf ? value : null)) stopped = true
  })

  return {
    write(chunk) {
      if (!done()) parser.write(chunk)
      return stopped ? null : failure
    },
    end() {
      if (!done()) parser.close()
      return stopped ? null : failure
    },
  }
}
