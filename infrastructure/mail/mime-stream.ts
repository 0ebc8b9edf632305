import { type AttachmentStream, type Headers, MailParser, type MessageText } from 'mailparser'
import { type ExtractFailure, limitExceeded, rethrowStoreFailure } from './extraction-failure.ts'

// mailparser's streaming MailParser as an async sequence: the message is written in as it is
// read (from the database, a part of another message), and every attachment comes out as a
// stream of its decoded bytes. The parser waits for an attachment to be read and released before
// it goes on (its backpressure), so at any time only a chunk of the message is held, never the
// message or an attachment. Text parts are the exception: mailparser joins them into a string.

const WRITE_BYTES = 64 * 1024

export type MimeItem =
  | { type: 'attachment'; attachment: AttachmentStream }
  | { type: 'text'; text: string | null }

export interface MimeOptions {
  /** MIME parts the parser may see (its maxChildNodes). */
  maxParts: number
}

/** A parser error as the reason the message cannot be read. */
export function mimeFailure(error: unknown, maxParts: number): ExtractFailure {
  // Never a reason of the message's own: thrown on to the job (StoreFailure, extraction-failure.ts).
  rethrowStoreFailure(error)
  const message = (error as Error)?.message ?? String(error)
  if ((error as { code?: string })?.code === 'EMAXLEN') {
    if (/child nodes/i.test(message))
      return limitExceeded('mime_parts', `the message has more than ${maxParts} MIME parts`)
    return limitExceeded('mime_header_bytes', `a MIME header block is too large: ${message}`)
  }
  return { code: 'malformed_mime', message: `the message cannot be parsed: ${message}` }
}

export interface MimeStream {
  /** The top-level headers, once the first item has been asked for (null before or without any). */
  headers(): Headers | null
  items: AsyncGenerator<MimeItem>
}

/**
 * Parses `source` as it is read. Each attachment must be consumed (or left) before the next item
 * is asked for: asking for it drains what is left and releases the attachment. Parser errors
 * throw from the iteration.
 */
export function mimeStream(source: AsyncIterable<Uint8Array>, options: MimeOptions): MimeStream {
  const parser = new MailParser({
    // Embedded messages stay attachments: an ARF part's original message must not be mistaken for
    // part of the report, and a forwarded report is parsed on its own (extract-reports.ts).
    ignoreEmbedded: true,
    maxChildNodes: options.maxParts,
    checksumAlgo: false,
    skipHtmlToText: true,
    skipTextToHtml: true,
    skipTextLinks: true,
    skipImageLinks: true,
    keepCidLinks: true,
  } as ConstructorParameters<typeof MailParser>[0])
  let headers: Headers | null = null
  parser.on('headers', (value: Headers) => {
    headers = value
  })
  let failure: unknown = null
  parser.on('error', (error: unknown) => {
    failure ??= error
  })
  let stopped = false
  const waitWritable = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        parser.off('drain', done)
        parser.off('close', done)
        parser.off('error', done)
        resolve()
      }
      parser.on('drain', done)
      parser.on('close', done)
      parser.on('error', done)
    })
  const pump = (async () => {
    try {
      for await (const chunk of source) {
        // In slices: mailsplit queues up to 16 writes whatever their size (an object-mode buffer).
        for (let at = 0; at < chunk.byteLength; at += WRITE_BYTES) {
          if (stopped || parser.destroyed) return
          if (!parser.write(chunk.subarray(at, at + WRITE_BYTES))) await waitWritable()
        }
      }
      if (!stopped && !parser.destroyed) parser.end()
    } catch (error) {
      failure ??= error
      parser.destroy(error as Error)
    }
  })()

  async function* items(): AsyncGenerator<MimeItem> {
    let open: AttachmentStream | null = null
    try {
      for await (const data of parser as AsyncIterable<AttachmentStream | MessageText>) {
        if (failure !== null) throw failure
        if (data.type === 'attachment') {
          open = data
          yield { type: 'attachment', attachment: data }
          await finish(data)
          open = null
        } else {
          yield { type: 'text', text: typeof data.text === 'string' ? data.text : null }
        }
      }
      if (failure !== null) throw failure
    } finally {
      stopped = true
      if (open !== null) open.release?.()
      if (!parser.destroyed) parser.destroy()
      await pump
    }
  }
  return { headers: () => headers, items: items() }
}

/** Reads what is left of an attachment (dropped) and lets the parser go on. */
async function finish(attachment: AttachmentStream): Promise<void> {
  const content = attachment.content
  if (!content.readableEnded && !content.destroyed) {
    for await (const _ of content as AsyncIterable<Buffer>) {
      // dropped: the consumer was done with the part
    }
  }
  attachment.release?.()
}
