// Large messages stream through the intake and the worker a piece at a time, so what they hold at
// once is small; but every piece leaves garbage behind (decoded base64, hex strings of bytea
// parameters, inflated XML), and the JavaScriptCore collector runs by the size of the JS heap, not
// by the memory behind buffers. Left alone, a 60 MB message grew the process by 250 MB of garbage
// (bench:ingest, docs/ingestion.md "Memory"). A pacer asks for a collection every few megabytes
// that flow through it, which keeps the garbage in proportion; small messages never reach it.

const EVERY_BYTES = 8 * 1024 * 1024

export interface GcPacer {
  /** Counts bytes that went past; asks for a collection once enough did. */
  count(bytes: number): void
}

export function gcPacer(everyBytes = EVERY_BYTES, collect: () => void = () => Bun.gc(true)): GcPacer {
  let since = 0
  return {
    count(bytes) {
      since += bytes
      if (since < everyBytes) return
      since = 0
      collect()
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

/**
 * A full collection now: after the intake of a large message whose worker starts on it at once
 * (src/compose/ingest.ts), so the report's stream does not grow on top of the intake's garbage.
 */
export const collectGarbage = (): void => Bun.gc(true)

/** The process's pacer: intake and worker count against the same garbage. */
export const processPacer: GcPacer = gcPacer()
