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
 * intake's garbage.
 */
export const collectGarbage = (): void => Bun.gc(true)

export interface GcPacer {
  /** Counts bytes that went past; asks for a collection once enough did. */
  count(bytes: number): void
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
    collect()
  }
  return {
    count(bytes) {
      since += bytes
      if (idle !== null) {
        last = performance.now()
        if (timer === null) arm(idle.afterMs)
      }
      if (since < everyBytes) return
      since = 0
      collectedAt = 0
      collect()
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

/** Passes the stream on, counting it against `pacer`. */
export async function* paced(source: AsyncIterable<Uint8Array>, pacer: GcPacer): AsyncGenerator<Uint8Array> {
  for await (const chunk of source) {
    pacer.count(chunk.byteLength)
    yield chunk
  }
}

/** The process's pacer: intake and worker count against the same garbage; a second of quiet after 1 MB or more collects it. */
export const processPacer: GcPacer = gcPacer(EVERY_BYTES, collectGarbage, {
  afterMs: 1000,
  minBytes: 1024 * 1024,
})
