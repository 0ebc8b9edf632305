import { describe, expect, test } from 'bun:test'
import { aggregateXml } from '../../../bench/report-generator.ts'
import { parseAggregateReport } from '../../../domain/reports/aggregate-parser.ts'
import type { AggregateEvent } from '../../../domain/reports/aggregate-types.ts'
import { parseAggregateInThread } from '../../../infrastructure/runtime/threaded-aggregate-parse.ts'

const encoder = new TextEncoder()

function pieces(text: string, size: number): Uint8Array[] {
  const bytes = encoder.encode(text)
  const out: Uint8Array[] = []
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size))
  return out
}

/** The pieces as a stream, counting how many were read. */
function source(list: Uint8Array[], failAt = -1) {
  const counter = { read: 0, closed: false }
  async function* stream() {
    try {
      for (const [i, piece] of list.entries()) {
        if (i === failAt) throw new Error('source broke')
        counter.read++
        yield piece
      }
    } finally {
      counter.closed = true
    }
  }
  return { stream: stream(), counter }
}

async function collect(events: AsyncIterable<AggregateEvent>): Promise<AggregateEvent[]> {
  const out: AggregateEvent[] = []
  for await (const event of events) out.push(event)
  return out
}

const xml = aggregateXml({ domain: 'example.com', reportId: 'r1', records: 2000, seed: 7 })

describe('parseAggregateInThread', () => {
  test('gives the same events as the parser on this thread, reading the same pieces', async () => {
    const here = source(pieces(xml, 4096))
    const there = source(pieces(xml, 4096))
    const expected = await collect(parseAggregateReport(here.stream))
    const got = await collect(parseAggregateInThread(there.stream))
    expect(got.length).toBe(2001)
    expect(got).toEqual(expected)
    expect(there.counter.read).toBe(here.counter.read)
  })

  test('reads no further than the parser after the report ends (trailing pieces stay unread)', async () => {
    const list = [...pieces(xml, 8192), encoder.encode('\n'), encoder.encode('trailing')]
    const here = source(list)
    const there = source(list)
    const expected = await collect(parseAggregateReport(here.stream))
    expect(await collect(parseAggregateInThread(there.stream))).toEqual(expected)
    expect(there.counter.read).toBe(here.counter.read)
    expect(there.counter.closed).toBe(true)
  })

  test('an invalid report ends with the same error event', async () => {
    const broken = `${xml.slice(0, 5000)}<record><row><<<`
    const expected = await collect(parseAggregateReport(source(pieces(broken, 1000)).stream))
    const got = await collect(parseAggregateInThread(source(pieces(broken, 1000)).stream))
    expect(got.at(-1)?.type).toBe('error')
    expect(got).toEqual(expected)
  })

  test("the source's error comes after the events of the pieces before it", async () => {
    const list = pieces(xml, 4096)
    const got: AggregateEvent[] = []
    const run = async () => {
      for await (const event of parseAggregateInThread(source(list, 10).stream)) got.push(event)
    }
    await expect(run()).rejects.toThrow('source broke')
    const expected: AggregateEvent[] = []
    await expect(
      (async () => {
        for await (const event of parseAggregateReport(source(list, 10).stream)) expected.push(event)
      })(),
    ).rejects.toThrow('source broke')
    expect(got).toEqual(expected)
    expect(got.length).toBeGreaterThan(1)
  })

  test('no answer within the timeout: a plain error (the job is retried), the thread ended', async () => {
    async function* stalled() {
      yield encoder.encode('<feedback>')
    }
    // 0 ms: no thread answers that fast.
    await expect(collect(parseAggregateInThread(stalled(), 0))).rejects.toThrow('no answer within 0 ms')
  })

  test('a thread that crashes or exits: a plain error (the job is retried), never a hang', async () => {
    const crash = URL.createObjectURL(
      new Blob(['throw new Error("boom")'], { type: 'application/javascript' }),
    )
    const read = source(pieces(xml, 4096))
    await expect(collect(parseAggregateInThread(read.stream, 10_000, crash))).rejects.toThrow(
      'aggregate parse thread',
    )
    expect(read.counter.closed).toBe(true)
    const exits = URL.createObjectURL(new Blob(['process.exit(3)'], { type: 'application/javascript' }))
    await expect(
      collect(parseAggregateInThread(source(pieces(xml, 4096)).stream, 10_000, exits)),
    ).rejects.toThrow('aggregate parse thread')
  })
})
