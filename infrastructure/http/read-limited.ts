/** Reads at most `limit` bytes of a response body, then cancels the rest (bodies are not trusted). */
export async function readLimitedText(
  response: Response,
  limit: number,
): Promise<{ text: string; truncated: boolean }> {
  if (response.body === null) return { text: '', truncated: false }
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  let truncated = false
  while (true) {
    const { done, value } = await reader.read()
    if (done) break
    const room = limit - size
    if (value.byteLength > room) {
      chunks.push(value.subarray(0, room))
      size = limit
      truncated = true
      await reader.cancel()
      break
    }
    chunks.push(value)
    size += value.byteLength
  }
  return { text: new TextDecoder().decode(Buffer.concat(chunks)), truncated }
}
