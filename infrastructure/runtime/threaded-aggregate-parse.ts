import type { AggregateEvent } from '../../domain/reports/aggregate-types.ts'

// A large aggregate report parsed on a thread of its own (issue #20): in ROLE=all the worker shares
// the API's only JavaScript thread, and the parse of a 100,000-record report (46 MB of XML) is most
// of its CPU time and garbage; the forced collections that garbage needs ("Memory" in
// docs/ingestion.md) stalled every request by 30-200 ms. The thread (aggregate-parse-thread.ts)
// has its own heap, so the parse and its collections run beside the requests; this thread reads
// the message, writes to PostgreSQL, and gets the events back one piece of input at a time.
//
// The same events in the same order as `parseAggregateReport` on this thread, and the source is
// read exactly as far as the parser asked for it (one piece ahead at most is never read: the next
// piece is read once the thread answered for the previous one and wants more), so the content
// hash of what was read is unchanged. An error of the source (a decompression bomb) is thrown after
// the events of the pieces before it, as it was. A crash of the thread, or no answer within
// `timeoutMs`, throws a plain Error: the job fails and is retried; the thread is always terminated.

const THREAD_URL = new URL('./aggregate-parse-thread.ts', import.meta.url).href

/** A piece's events are waited for at most this long before the thread is given up (and ended). */
export const PARSE_THREAD_TIMEOUT_MS = 60_000

type Answer = { events: AggregateEvent[]; last: boolean }

export async function* parseAggregateInThread(
  chunks: AsyncIterable<Uint8Array>,
  timeoutMs: number = PARSE_THREAD_TIMEOUT_MS,
  /** The thread's code (tests give one that crashes). */
  threadUrl: string = THREAD_URL,
): AsyncGenerator<AggregateEvent> {
  const source = chunks[Symbol.asyncIterator]()
  const thread = new Worker(threadUrl)
  const answers: Answer[] = []
  let failure: Error | null = null
  let wake: (() => void) | null = null
  const signal = () => {
    wake?.()
    wake = null
  }
  thread.onmessage = (event: MessageEvent<Answer>) => {
    answers.push(event.data)
    signal()
  }
  thread.onerror = (event: ErrorEvent) => {
    failure ??= new Error(`aggregate parse thread failed: ${event.message}`)
    signal()
  }
  thread.addEventListener('close', () => {
    failure ??= new Error('aggregate parse thread exited before the report was parsed')
    signal()
  })
  async function answer(): Promise<Answer> {
    const deadline = Date.now() + timeoutMs
    while (answers.length === 0) {
      if (failure !== null) throw failure
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`aggregate parse thread gave no answer within ${timeoutMs} ms`)
      let timer: Timer | undefined
      await new Promise<void>((resolve) => {
        wake = resolve
        timer = setTimeout(resolve, left)
      })
      clearTimeout(timer)
    }
    return answers.shift()!
  }
  // Reads and posts the next piece; an error of the source is kept, to be thrown in its place.
  let done = false
  async function feed(): Promise<{ error: unknown } | null> {
    try {
      const piece = await source.next()
      done = piece.done === true
      thread.postMessage(piece.done ? { end: true } : { chunk: piece.value })
      return null
    } catch (error) {
      return { error }
    }
  }
  try {
    let failed = await feed()
    if (failed !== null) throw failed.error
    while (true) {
      const { events, last } = await answer()
      if (last) {
        yield* events
        return
      }
      if (done) throw new Error('aggregate parse thread did not finish at the end of its input')
      // The parser asked for the next piece: it parses it while this piece's events are stored.
      failed = await feed()
      yield* events
      if (failed !== null) throw failed.error
    }
  } finally {
    thread.terminate()
    // A source left part-read (the parser stopped, or the consumer did) is closed, as `for await` does.
    await source.return?.()
  }
}
