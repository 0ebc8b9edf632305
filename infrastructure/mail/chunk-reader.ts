// Reads a byte stream in pieces of the reader's choosing: the gzip framing (RFC 1952 §2.3) and
// the sniffer need a few leading bytes at a time, while the bulk passes through untouched.

export class ChunkReader {
  private readonly iterator: AsyncIterator<Uint8Array>
  private pending: Uint8Array[] = []
  private buffered = 0
  private done = false
  /** Bytes taken from the source so far (the compressed size read, for the ratio limit). */
  pulled = 0

  constructor(source: AsyncIterable<Uint8Array> | Uint8Array) {
    this.iterator =
      source instanceof Uint8Array ? slices(source)[Symbol.asyncIterator]() : source[Symbol.asyncIterator]()
  }

  private async pull(): Promise<boolean> {
    if (this.done) return false
    const next = await this.iterator.next()
    if (next.done) {
      this.done = true
      return false
    }
    if (next.value.byteLength > 0) {
      this.pending.push(next.value)
      this.buffered += next.value.byteLength
      this.pulled += next.value.byteLength
    }
    return true
  }

  /** The next `want` bytes (fewer at the end of the stream), without consuming them. */
  async peek(want: number): Promise<Uint8Array> {
    while (this.buffered < want && (await this.pull())) {}
    if (this.pending.length === 1 || this.buffered === 0) {
      return (this.pending[0] ?? new Uint8Array(0)).subarray(0, want)
    }
    const joined = new Uint8Array(this.buffered)
    let at = 0
    for (const chunk of this.pending) {
      joined.set(chunk, at)
      at += chunk.byteLength
    }
    this.pending = [joined]
    return joined.subarray(0, want)
  }

  skip(count: number): void {
    let left = count
    while (left > 0 && this.pending.length > 0) {
      const first = this.pending[0]!
      if (first.byteLength <= left) {
        this.pending.shift()
        left -= first.byteLength
        this.buffered -= first.byteLength
      } else {
        this.pending[0] = first.subarray(left)
        this.buffered -= left
        left = 0
      }
    }
  }

  /** Puts bytes back in front (read too far ahead). */
  unshift(bytes: Uint8Array): void {
    if (bytes.byteLength === 0) return
    this.pending.unshift(bytes)
    this.buffered += bytes.byteLength
  }

  /** The next piece of at most `max` bytes, or null at the end. */
  async read(max: number): Promise<Uint8Array | null> {
    if (this.buffered === 0 && !(await this.pull())) return null
    const first = this.pending[0]!
    const piece = first.subarray(0, max)
    this.skip(piece.byteLength)
    return piece
  }

  /** The rest, from where the reader is, in the pieces it arrives in. */
  async *stream(): AsyncGenerator<Uint8Array> {
    try {
      for (;;) {
        const piece = await this.read(Number.MAX_SAFE_INTEGER)
        if (piece === null) return
        yield piece
      }
    } finally {
      await this.close()
    }
  }

  /** Stops reading the source (the rest is left to whoever owns it). */
  async close(): Promise<void> {
    this.pending = []
    this.buffered = 0
    if (!this.done) {
      this.done = true
      await this.iterator.return?.()
    }
  }
}

const SLICE = 64 * 1024

/** A byte array as a stream of slices (views, not copies). */
export async function* slices(bytes: Uint8Array, size = SLICE): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.byteLength; at += size) yield bytes.subarray(at, at + size)
}
