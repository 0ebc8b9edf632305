import { describe, expect, test } from 'bun:test'
import { constants, deflateRawSync, gzipSync } from 'node:zlib'
import { zipSync } from 'fflate'
import {
  ExtractionError,
  type ExtractLimits,
  extractReports,
  readAll,
} from '../../../infrastructure/mail/extract-reports.ts'
import { attachment, bytesOf, multipart, singlePart, textPart } from './mime-builder.ts'

// Hostile messages: each must end in a typed reason, quickly, without holding the expanded data.

const MiB = 1024 * 1024
const LIMITS: ExtractLimits = {
  maxDecompressedBytes: 64 * MiB,
  maxZipEntries: 1000,
  maxCompressionRatio: 100_000,
  maxParts: 1000,
}
const XML = bytesOf('<?xml version="1.0"?><feedback><report_id>x</report_id></feedback>')

/**
 * Raw deflate data for an XML start followed by `mebibytes` MiB of zeros, made without ever
 * holding them: a block compressed with a full flush ends byte-aligned and refers to nothing
 * before it, so blocks can be strung together and repeated; `03 00` is a final, empty block.
 */
function zerosDeflated(mebibytes: number): Buffer {
  const flushed = (data: Uint8Array) =>
    deflateRawSync(data, { finishFlush: constants.Z_FULL_FLUSH, level: 9 })
  const head = flushed(bytesOf('<?xml version="1.0"?><feedback>'))
  const block = flushed(Buffer.alloc(MiB))
  return Buffer.concat([head, ...Array.from({ length: mebibytes }, () => block), Buffer.from([0x03, 0x00])])
}

/** RFC 1952 member around raw deflate data; CRC and size are never reached, so they are left zero. */
function gzipMember(deflated: Buffer): Buffer {
  return Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]), deflated, Buffer.alloc(8)])
}

/** A zip with one deflated entry (local header only, which is what streaming readers walk). */
function zipEntry(name: string, deflated: Buffer): Buffer {
  const header = Buffer.alloc(30)
  header.writeUInt32LE(0x04034b50, 0)
  header.writeUInt16LE(20, 4)
  header.writeUInt16LE(8, 8)
  header.writeUInt32LE(deflated.length, 18)
  header.writeUInt32LE(0, 22)
  header.writeUInt16LE(name.length, 26)
  return Buffer.concat([header, Buffer.from(name), deflated])
}

async function drain(source: AsyncIterable<Uint8Array>): Promise<{ bytes: number; error: unknown }> {
  let bytes = 0
  try {
    for await (const chunk of source) bytes += chunk.byteLength
    return { bytes, error: null }
  } catch (error) {
    return { bytes, error }
  }
}

async function onlyPayload(raw: string, limits = LIMITS) {
  const result = await extractReports(bytesOf(raw), limits)
  if (!result.ok) throw new Error(`expected a payload, got ${JSON.stringify(result.reason)}`)
  expect(result.value.payloads).toHaveLength(1)
  return result.value.payloads[0]!
}

describe('decompression bombs', () => {
  test('a gzip of 10 GiB of zeros stops at the size limit', async () => {
    const bomb = gzipMember(zerosDeflated(10 * 1024))
    expect(bomb.length).toBeLessThan(11 * MiB)
    const payload = await onlyPayload(multipart([attachment('application/gzip', 'bomb.xml.gz', bomb)]), {
      ...LIMITS,
      maxCompressionRatio: 1_000_000,
    })
    expect(payload).toMatchObject({ kind: 'aggregate-xml', compression: 'gzip' })
    const started = performance.now()
    const rssBefore = process.memoryUsage().rss
    const { bytes, error } = await drain(payload.open())
    // Chunks are dropped as they are counted: a stream that held the output would need gigabytes.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(512 * MiB)
    expect(error).toBeInstanceOf(ExtractionError)
    expect((error as ExtractionError).reason).toEqual({
      code: 'limit_exceeded',
      limit: 'decompressed_bytes',
      message: `decompressed size exceeds the limit of ${64 * MiB} bytes`,
    })
    expect(bytes).toBeLessThanOrEqual(64 * MiB)
    expect(performance.now() - started).toBeLessThan(15_000)
  })

  test('the compression ratio limit catches a bomb under the size limit', async () => {
    const bomb = gzipMember(zerosDeflated(8))
    const payload = await onlyPayload(multipart([attachment('application/gzip', 'r.xml.gz', bomb)]), {
      ...LIMITS,
      maxCompressionRatio: 100,
    })
    const read = await readAll(payload.open(), 64 * MiB)
    expect(read).toMatchObject({ ok: false, reason: { code: 'limit_exceeded', limit: 'compression_ratio' } })
  })

  test('a zip entry inflating past the limit', async () => {
    const started = performance.now()
    const zip = zipEntry('report.xml', zerosDeflated(200))
    const payload = await onlyPayload(singlePart(attachment('application/zip', 'r.zip', zip)), {
      ...LIMITS,
      maxDecompressedBytes: 16 * MiB,
      maxCompressionRatio: 1_000_000,
    })
    expect(payload.entryName).toBe('report.xml')
    const read = await readAll(payload.open(), 64 * MiB)
    expect(read).toMatchObject({ ok: false, reason: { code: 'limit_exceeded', limit: 'decompressed_bytes' } })
    // The archive is abandoned at the limit, not inflated to the bomb's end (zip-stream.ts).
    expect(performance.now() - started).toBeLessThan(15_000)
  })

  test('a zip with 100,000 entries is refused while listing', async () => {
    const files: Record<string, Uint8Array> = {}
    for (let i = 0; i < 100_000; i++) files[`f${i}.xml`] = new Uint8Array(0)
    const raw = singlePart(attachment('application/zip', 'many.zip', zipSync(files, { level: 0 })))
    const started = performance.now()
    const result = await extractReports(bytesOf(raw), { ...LIMITS, maxZipEntries: 1000 })
    expect(result).toEqual({
      ok: false,
      reason: {
        code: 'limit_exceeded',
        limit: 'zip_entries',
        message: 'the zip archive has more than 1000 entries',
      },
    })
    expect(performance.now() - started).toBeLessThan(5_000)
  })
})

describe('MIME structure limits', () => {
  function nested(depth: number, leaf: string): string {
    let body = leaf
    for (let level = depth; level > 0; level--) {
      body = `Content-Type: multipart/mixed; boundary="n${level}"\r\n\r\n--n${level}\r\n${body}\r\n--n${level}--\r\n`
    }
    return `From: a@example.net\r\nTo: b@example.com\r\nSubject: deep\r\nMIME-Version: 1.0\r\n${body}`
  }
  const leaf = `Content-Type: application/gzip\r\nContent-Transfer-Encoding: base64\r\n\r\n${Buffer.from(gzipSync(XML)).toString('base64')}`

  test('50,000 nested multiparts end at the part limit', async () => {
    const started = performance.now()
    const result = await extractReports(bytesOf(nested(50_000, leaf)), LIMITS)
    expect(result).toEqual({
      ok: false,
      reason: {
        code: 'limit_exceeded',
        limit: 'mime_parts',
        message: 'the message has more than 1000 MIME parts',
      },
    })
    expect(performance.now() - started).toBeLessThan(15_000)
  })

  test('nesting within the limit still yields the report at the bottom', async () => {
    const result = await extractReports(bytesOf(nested(200, leaf)), LIMITS)
    expect(result.ok && result.value.payloads.map((payload) => payload.kind)).toEqual(['aggregate-xml'])
  })

  test('many sibling parts end at the part limit', async () => {
    const parts = Array.from({ length: 50 }, () => textPart('x'))
    const result = await extractReports(bytesOf(multipart(parts)), { ...LIMITS, maxParts: 20 })
    expect(result).toMatchObject({ ok: false, reason: { code: 'limit_exceeded', limit: 'mime_parts' } })
  })

  test('an uncompressed payload larger than the size limit', async () => {
    const big = bytesOf(`<?xml version="1.0"?><feedback>${'x'.repeat(4096)}</feedback>`)
    const raw = multipart([attachment('text/xml', 'r.xml', big)])
    const result = await extractReports(bytesOf(raw), { ...LIMITS, maxDecompressedBytes: 1024 })
    expect(result).toMatchObject({
      ok: false,
      reason: { code: 'limit_exceeded', limit: 'decompressed_bytes' },
    })
  })
})

describe('corrupt archives', () => {
  test('a gzip whose deflate data is garbage fails while sniffing', async () => {
    const broken = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff, 0xff, 0xff, 0xff, 0xff])
    const result = await extractReports(
      bytesOf(multipart([attachment('application/gzip', 'r.gz', broken)])),
      LIMITS,
    )
    expect(result).toMatchObject({ ok: false, reason: { code: 'decompression_failed' } })
  })

  test('a truncated gzip fails while streaming, after the part that was there', async () => {
    const big = bytesOf(`<?xml version="1.0"?><feedback>${'<record/>'.repeat(100_000)}</feedback>`)
    const gz = gzipSync(big)
    const payload = await onlyPayload(
      multipart([attachment('application/gzip', 'r.gz', gz.subarray(0, gz.length - 100))]),
    )
    const read = await readAll(payload.open(), 64 * MiB)
    expect(read).toMatchObject({ ok: false, reason: { code: 'decompression_failed' } })
  })

  test('a gzip with a damaged trailer is refused (a small one already while sniffing)', async () => {
    const gz = Buffer.from(gzipSync(XML))
    gz.writeUInt32LE(12345, gz.length - 4)
    const result = await extractReports(
      bytesOf(multipart([attachment('application/gzip', 'r.gz', gz)])),
      LIMITS,
    )
    expect(result).toEqual({
      ok: false,
      reason: {
        code: 'decompression_failed',
        message: 'the gzip trailer does not match the decompressed size',
      },
    })
  })

  test('concatenated gzip members are read in full; trailing garbage is ignored', async () => {
    const member = gzipSync(XML)
    const twice = Buffer.concat([member, member, Buffer.from('\r\n')])
    const payload = await onlyPayload(multipart([attachment('application/gzip', 'r.gz', twice)]))
    const read = await readAll(payload.open(), MiB)
    expect(read).toEqual({ ok: true, value: new Uint8Array([...XML, ...XML]) })
  })

  test('a zip cut off inside its entry fails, whether while listing or while streaming', async () => {
    // Letters from a Lehmer generator: incompressible enough that half the zip is half the entry.
    let seed = 1
    const noise = Array.from({ length: 50_000 }, () => {
      seed = (seed * 48271) % 2147483647
      return (seed % 26) + 97
    })
    const xml = bytesOf(`<?xml version="1.0"?><feedback>${String.fromCharCode(...noise)}</feedback>`)
    const zip = zipSync({ 'r.xml': xml })
    const raw = multipart([attachment('application/zip', 'r.zip', zip.subarray(0, zip.length / 2))])
    const result = await extractReports(bytesOf(raw), LIMITS)
    const read = result.ok ? await readAll(result.value.payloads[0]!.open(), MiB) : result
    expect(read).toMatchObject({ ok: false, reason: { code: 'decompression_failed' } })
  })

  test('a zip entry with an unsupported compression method', async () => {
    const zip = zipEntry('r.xml', Buffer.from('data'))
    zip.writeUInt16LE(12, 8) // bzip2
    const result = await extractReports(
      bytesOf(multipart([attachment('application/zip', 'r.zip', zip)])),
      LIMITS,
    )
    expect(result).toMatchObject({
      ok: false,
      reason: { code: 'decompression_failed', message: expect.stringContaining('compression method 12') },
    })
  })

  test('readAll refuses more than it was asked to hold', async () => {
    const payload = await onlyPayload(multipart([attachment('text/xml', 'r.xml', XML)]))
    expect(await readAll(payload.open(), 10)).toMatchObject({
      ok: false,
      reason: { code: 'limit_exceeded', limit: 'decompressed_bytes' },
    })
  })
})
