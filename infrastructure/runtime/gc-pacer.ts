import { fullGC } from 'bun:jsc'

// Large messages stream through the intake and the worker a piece at a time, so what they hold at
// once is small; but every piece leaves garbage behind (decoded base64, hex strings of bytea
// parameters, inflated XML), and the JavaScriptCore collector runs by the size of the JS heap, not
// by the memory behind buffers. Left alone, a 60 MB message grew the process by 250 MB of garbage
// (bench:ingest, docs/ingestion.md "Memory"). A pacer asks for a collection every few megabytes
// that flow through it, which keeps the garbage in proportion; small messages never reach it.

const EVERY_BYTES = 8 * 1024 * 1024

/**
 * A full collection now: the pacer's, and after the intake of a large message whose worker starts
 * on it at once (src/compose/ingest.ts), so the report's stream does not grow on top of the
 * intake's garbage. `Bun.gc(true)` marks the whole heap and then sweeps every block at once, which
 * frees what dead objects hold outside the heap (buffers, string storage) before it returns.
 */
export const collectGarbage = (): void => Bun.gc(true)

/**
 * A full collection without the sweep: JavaScriptCore's `fullGC` marks the whole heap and leaves
 * the dead cells to be swept when their blocks are next allocated from. It stalls the thread for
 * the marking only (21-39 ms against 35-64 ms for `Bun.gc(true)` in the service while a
 * 100,000-record report streamed). Right for garbage of small cells that the stream goes on
 * allocating (the parse's tokens and records): used for the intake's buffers too, it left them
 * unswept and raised the peaks by 15-90 MB (docs/ingestion.md, "The record stream's collections").
 */
export const markGarbage = (): void => {
  fullGC()
}

export interface GcPacer {
  /**
   * Counts bytes that went past; asks for a collection once enough did: the pacer's own, or
   * `collect` when the stream that counts knows a cheaper one suits its garbage (`markGarbage`)
   * and every byte counted since the last collection was counted with it. One byte counted without
   * (the intake's pieces, another message's) makes it the pacer's own: that garbage needs its sweep.
   */
  count(bytes: number, collect?: () => void): void
  /**
   * Work under way (a message being read and stored): no pause collection until it is released,
   * whatever the pause in its bytes. Answers the release.
   */
  hold(): () => void
}

/**
 * One more collection once the flow stops: `afterMs` after the last bytes counted, if at least
 * `minBytes` went past since the last collection. Between two collections every 8 MB the garbage
 * of up to 8 MB stays; after a burst of small reports (each far below 8 MB) it stayed until the
 * next large message, whose stream then grew on top of it: a 100,000-record report after 500 small
 * ones peaked at 261-263 MB from 237-239 MB, against 232 MB from 181 MB with a collection between
 * them (bench:mixed, docs/ingestion.md "Memory"). A full collection stalls the thread (~20-50 ms),
 * so once per pause in the flow, never while it flows, and never while a message is being worked
 * on (`hold`): a large report's last stage counts no bytes for a second or more, and a stall then
 * would be the report's own (the 8 MB rule paces a message's work).
 */
export interface IdleCollection {
  afterMs: number
  minBytes: number
}

export function gcPacer(
  everyBytes = EVERY_BYTES,
  collect: () => void = collectGarbage,
  idle: IdleCollection | null = null,
): GcPacer {
  let since = 0
  // Bytes counted since the last collection without a collection of their own: their garbage
  // wants the pacer's (full) collection.
  let ownSince = 0
  // One timer per pause: a count only notes its time, and the timer, when it fires early, waits
  // for the rest of the pause (no timer set per chunk).
  let last = 0
  let holds = 0
  // `since` when the last pause collection ran: only what went past after it is collected at the next pause.
  let collectedAt = 0
  let timer: ReturnType<typeof setTimeout> | null = null
  const arm = (ms: number) => {
    timer = setTimeout(onIdle, ms)
    // Never what keeps a process alive.
    timer.unref?.()
  }
  const onIdle = () => {
    timer = null
    if (idle === null) return
    // Under way: the release arms the timer again.
    if (holds > 0) return
    const quiet = performance.now() - last
    if (quiet < idle.afterMs) return arm(idle.afterMs - quiet)
    if (since - collectedAt < idle.minBytes) return
    // The count goes on from where it was: the collections of the next message fall where they
    // would have without this one. Counting from zero here moved them, and the 60 MB message's
    // peak growth with them: 129-145 MB against 108-126 MB (bench:ingest's memory part, alternated).
    collectedAt = since
    ownSince = 0
    collect()
  }
  return {
    count(bytes, streamCollect) {
      since += bytes
      if (streamCollect === undefined) ownSince += bytes
      if (idle !== null) {
        last = performance.now()
        if (timer === null) arm(idle.afterMs)
      }
      if (since < everyBytes) return
      const run = streamCollect !== undefined && ownSince === 0 ? streamCollect : collect
      since = 0
      ownSince = 0
      collectedAt = 0
      run()
    },
    hold() {
      holds++
      let released = false
      return () => {
        if (released) return
        released = true
        holds--
        if (idle === null || holds > 0) return
        // The pause is counted from the end of the work.
        last = performance.now()
        if (timer === null) arm(idle.afterMs)
      }
    },
  }
}

/** Runs `work` with `pacer` held (no pause collection meanwhile), released however it ends. */
export async function held<T>(pacer: GcPacer, work: () => Promise<T>): Promise<T> {
  const release = pacer.hold()
  try {
    return await work()
  } finally {
    release()
  }
}

/** Passes the stream on, counting it against `pacer` (with `collect`, as `count` takes it). */
export async function* paced(
  source: AsyncIterable<Uint8Array>,
  pacer: GcPacer,
  collect?: () => void,
): AsyncGenerator<Uint8Array> {
  for await (const chunk of source) {
    pacer.count(chunk.byteLength, collect)
    yield chunk
  }
}

/** The process's pacer: intake and worker count against the same garbage; a second of quiet after 1 MB or more collects it. */
export const processPacer: GcPacer = gcPacer(EVERY_BYTES, collectGarbage, {
  afterMs: 1000,
  minBytes: 1024 * 1024,
})
