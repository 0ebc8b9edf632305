// Splits an mbox file (a mailbox export: Thunderbird, Apple Mail, Google Takeout, mutt) into its
// messages as it streams, so a mailbox of any size costs one message of memory. The format is
// RFC 4155's: each message starts with a "From " separator line (dropped), and is followed by a
// blank line the writer added (dropped). Body lines that began with "From " were quoted as ">From ";
// mboxrd quotes ">From " too (">>From "), so one ">" is removed from any line of ">"s then "From "
// (mboxrd's unquoting, which is also right for the mboxo files most tools write, except for a body
// line that was ">From " before quoting, which mboxo cannot tell apart anyway).

export type MboxMessage =
  | { ok: true; raw: Uint8Array }
  /** A message over `maxBytes`: its size, and nothing of it kept. */
  | { ok: false; size: number }

const LF = 0x0a
const CR = 0x0d
const GT = 0x3e
const FROM = [0x46, 0x72, 0x6f, 0x6d, 0x20] // "From "

// A line longer than this is no separator: it is passed on to the message in pieces.
const MAX_LINE = 64 * 1024

function fromAt(bytes: Uint8Array, at: number): boolean {
  if (bytes.length < at + FROM.length) return false
  for (let i = 0; i < FROM.length; i++) if (bytes[at + i] !== FROM[i]) return false
  return true
}

/** Whether the line at `at` is ">"s then "From " (a quoted From line). */
function quotedFromAt(bytes: Uint8Array, at: number): boolean {
  let i = at
  while (i < bytes.length && bytes[i] === GT) i++
  return i > at && fromAt(bytes, i)
}

function join(parts: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size)
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.byteLength
  }
  return out
}

/** The blank line mbox writers put before the next separator is not part of the message. */
function withoutSeparatorBlank(raw: Uint8Array): Uint8Array {
  const n = raw.length
  if (n >= 4 && raw[n - 4] === CR && raw[n - 3] === LF && raw[n - 2] === CR && raw[n - 1] === LF)
    return raw.subarray(0, n - 2)
  if (n >= 2 && raw[n - 2] === LF && raw[n - 1] === LF) return raw.subarray(0, n - 1)
  return raw
}

/**
 * The messages of an mbox stream, in order. The source must hand out chunks it does not reuse (file
 * streams do): a message keeps slices of them until it is yielded.
 */
export async function* splitMbox(
  source: AsyncIterable<Uint8Array>,
  maxBytes: number,
): AsyncGenerator<MboxMessage> {
  let parts: Uint8Array[] = []
  let size = 0
  let inMessage = false
  /** Bytes of the current line not yet seen whole. */
  let rest: Uint8Array = new Uint8Array(0)
  /** The current line was passed on in pieces already (too long): the rest of it is body. */
  let midLine = false

  const append = (bytes: Uint8Array) => {
    if (!inMessage || bytes.byteLength === 0) return // nothing precedes the first separator (fileKind)
    size += bytes.byteLength
    if (size <= maxBytes) parts.push(bytes)
    else parts = []
  }
  const finish = (): MboxMessage | null => {
    if (!inMessage) return null
    const message: MboxMessage =
      size <= maxBytes ? { ok: true, raw: withoutSeparatorBlank(join(parts, size)) } : { ok: false, size }
    parts = []
    size = 0
    return message
  }

  for await (const chunk of source) {
    let bytes = chunk
    if (rest.byteLength > 0) {
      bytes = new Uint8Array(rest.byteLength + chunk.byteLength)
      bytes.set(rest)
      bytes.set(chunk, rest.byteLength)
    }
    // Body bytes go on in runs, one slice per run: a run ends only at a separator or a quoted line.
    let run = 0
    let start = 0
    for (let nl = bytes.indexOf(LF, start); nl !== -1; nl = bytes.indexOf(LF, start)) {
      const line = start
      start = nl + 1
      if (midLine) {
        midLine = false
      } else if (fromAt(bytes, line)) {
        append(bytes.subarray(run, line))
        run = start
        const done = finish()
        inMessage = true
        if (done !== null) yield done
      } else if (quotedFromAt(bytes, line)) {
        append(bytes.subarray(run, line))
        run = line + 1 // one ">" less
      }
    }
    append(bytes.subarray(run, start))
    rest = bytes.subarray(start)
    if (rest.byteLength > MAX_LINE) {
      // A line this long is body, whatever it starts with (a separator line is short).
      append(!midLine && quotedFromAt(rest, 0) ? rest.subarray(1) : rest)
      rest = new Uint8Array(0)
      midLine = true
    }
  }
  if (rest.byteLength > 0 && !(!midLine && fromAt(rest, 0)))
    append(!midLine && quotedFromAt(rest, 0) ? rest.subarray(1) : rest)
  const last = finish()
  if (last !== null) yield last
}
