// The entry of the aggregate-parse thread (infrastructure/runtime/threaded-aggregate-parse.ts): the
// parser runs here, on a thread of its own, so its CPU time and its garbage (decoded text, tokens,
// record objects) stay off the API's thread in ROLE=all (issue #20; docs/ingestion.md, "Sharing the
// thread with the API"). The thread has its own heap: its collections never stall a request.
//
// Protocol: the main thread posts `{ chunk }` (one decompressed piece) or `{ end: true }`; for each
// piece the thread answers once, when the parser asks for the next piece or stops, with the events
// that piece produced: `{ events, last }`. `last` means the parser is done (the report ended, or an
// `error` event): no more pieces are read, so the main thread hashes exactly what was parsed.
import { parseAggregateReport } from '../../domain/reports/aggregate-parser.ts'
import type { AggregateEvent } from '../../domain/reports/aggregate-types.ts'
import { gcPacer } from './gc-pacer.ts'

declare const self: Worker

type Inbound = { chunk: Uint8Array } | { end: true }

const inbox: Inbound[] = []
let wake: (() => void) | null = null
self.onmessage = (event: MessageEvent<Inbound>) => {
  inbox.push(event.data)
  wake?.()
  wake = null
}

async function next(): Promise<Inbound> {
  while (inbox.length === 0) await new Promise<void>((resolve) => (wake = resolve))
  return inbox.shift()!
}

// This heap's own pacer ("Memory" in docs/ingestion.md): full collections here stall only this
// thread, and its heap is small, so they are cheap. Every 2 MB of XML (bench:mixed, issue #20);
// Bun's `smol` mode with every 1 MB cut the peak by 5-10 MB more but made the report ~20% slower.
const pacer = gcPacer(2 * 1024 * 1024)
let events: AggregateEvent[] = []
const flush = (last: boolean) => {
  self.postMessage({ events, last })
  events = []
}

async function* chunks(): AsyncGenerator<Uint8Array> {
  let first = true
  while (true) {
    if (!first) flush(false)
    first = false
    const message = await next()
    if ('end' in message) return
    pacer.count(message.chunk.byteLength)
    yield message.chunk
  }
}

for await (const event of parseAggregateReport(chunks())) events.push(event)
flush(true)
