import type { AttachmentStream } from 'mailparser'

// The bytes of a MIME part as the message walk (infrastructure/mail/extract-reports.ts) reads them:
// as they stream past, a bounded prefix kept, the rest read past.

/** An attachment's decoded bytes; leaving the loop early does not end the part (the parser drains it). */
export function contentOf(attachment: AttachmentStream): AsyncIterable<Uint8Array> {
  const content = attachment.content as unknown as {
    iterator(options: { destroyOnReturn: boolean }): AsyncIterable<Uint8Array>
  }
  return content.iterator({ destroyOnReturn: false })
}

/** Passes `source` on, keeping its first `limit` bytes in `kept` (an ARF piece). */
export async function* keepingPrefix(
  source: AsyncIterable<Uint8Array>,
  limit: number,
  done: (bytes: Uint8Array) => void,
): AsyncGenerator<Uint8Array> {
  const prefix = new Uint8Array(limit)
  let filled = 0
  try {
    for await (const chunk of source) {
      if (filled < limit) {
        const take = Math.min(limit - filled, chunk.byteLength)
        prefix.set(chunk.subarray(0, take), filled)
        filled += take
      }
      yield chunk
    }
  } finally {
    done(prefix.slice(0, filled))
  }
}

export async function drain(source: AsyncIterable<Uint8Array>): Promise<void> {
  for await (const _ of source) {
    // read past: only the kept prefix matters
  }
}
