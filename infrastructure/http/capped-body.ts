import { failureReason, OutboundError } from './outbound-error.ts'

// A response body read under a byte cap (docs/outbound-http.md): never more than the cap is held,
// and a deadline's abort cancels the read.

/** The body, streamed and counted: never more than the cap is held, the rest is cancelled unread. */
export async function readCapped(
  response: Response,
  cap: number,
  signal: AbortSignal,
  overflow: 'fail' | 'truncate',
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const tooLarge = () => new OutboundError('too_large', `the answer is larger than ${cap} bytes`)
  const declared = Number(response.headers.get('content-length'))
  if (overflow === 'fail' && Number.isFinite(declared) && declared > cap) {
    await response.body?.cancel().catch(() => {})
    throw tooLarge()
  }
  if (response.body === null) return { bytes: new Uint8Array(0), truncated: false }
  const reader = response.body.getReader()
  const cancel = () => reader.cancel().catch(() => {})
  signal.addEventListener('abort', cancel, { once: true })
  const chunks: Uint8Array[] = []
  let size = 0
  let truncated = false
  try {
    while (true) {
      const { done, value } = await reader.read()
      if (done) break
      if (size + value.byteLength > cap) {
        await cancel()
        if (overflow === 'fail') throw tooLarge()
        chunks.push(value.subarray(0, cap - size))
        size = cap
        truncated = true
        break
      }
      chunks.push(value)
      size += value.byteLength
    }
  } catch (error) {
    if (error instanceof OutboundError && error.kind === 'too_large') throw error
    // A reset or the deadline mid-body: a snippet keeps what came, anything else fails.
    if (overflow === 'fail')
      throw signal.aborted ? signal.reason : new OutboundError('connect', failureReason(error))
    truncated = true
  } finally {
    signal.removeEventListener('abort', cancel)
  }
  if (signal.aborted) {
    if (overflow === 'fail') throw signal.reason
    truncated = true
  }
  return { bytes: concat(chunks, size), truncated }
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}
