import { describe, expect, test } from 'bun:test'
import { constants, crc32, deflateRawSync } from 'node:zlib'
import {
  ExtractionError,
  type ExtractLimits,
  extractReports,
} from '../../../infrastructure/mail/extract-reports.ts'
import { zipEntries } from '../../../infrastructure/mail/zip-stream.ts'

// Entries that hold no report are passed over without being inflated (zip-stream.ts): by the
// compressed size in their local header, or, with general purpose bit 3 set, to their data
// descriptor. The archives are built here byte by byte (PKWARE APPNOTE 4.3), central directory
// included, so that both kinds of entry can be made without holding what they expand to.

const MiB = 1024 * 1024
// What the worker runs with (src/compose/ingest.ts, INGEST_MAX_REPORT_BYTES's default).
const LIMITS: ExtractLimits = {
  maxDecompressedBytes: 1024 * MiB,
  maxZipEntries: 32,
  maxCompressionRatio: 1000,
  maxParts: 1000,
}
const encoder = new TextEncoder()
const REPORT = encoder.encode(
  '<?xml version="1.0"?><feedback><report_metadata><org_name>example.net</org_name>' +
    '<report_id>skip-1</report_id></report_metadata></feedback>',
)

interface RawEntry {
  name: string
  method: 0 | 8
  /** The entry's data as stored in the archive (compressed, for method 8). */
  body: Uint8Array
  crc: number
  size: number
  /** General purpose bit 3: sizes and CRC after the data (APPNOTE 4.3.9), zero in the local header. */
  descriptor: boolean
}

function entry(name: string, data: Uint8Array, method: 0 | 8, descriptor = false): RawEntry {
  const body = method === 8 ? deflateRawSync(data) : data
  return { name, method, body, crc: crc32(data), size: data.byteLength, descriptor }
}

/**
 * `mebibytes` MiB of zeros, deflated without ever holding them: a block compressed with a full
 * flush ends byte-aligned and refers to nothing before it, so it can be repeated; `03 00` is a
 * final, empty block. ~1,032:1, the most deflate gives.
 */
function zeros(name: string, mebibytes: number, descriptor = false): RawEntry {
  const zero = Buffer.alloc(MiB)
  const block = deflateRawSync(zero, { finishFlush: constants.Z_FULL_FLUSH, level: 9 })
  const body = Buffer.concat([...Array.from({ length: mebibytes }, () => block), Buffer.from([0x03, 0x00])])
  let crc = 0
  for (let i = 0; i < mebibytes; i++) crc = crc32(zero, crc)
  return { name, method: 8, body, crc, size: mebibytes * MiB, descriptor }
}

/** Local headers, data and descriptors (4.3.7, 4.3.9), then the central directory (4.3.12, 4.3.16). */
function zipOf(entries: RawEntry[]): Uint8Array {
  const parts: Buffer[] = []
  const central: Buffer[] = []
  let offset = 0
  const add = (part: Buffer) => {
    parts.push(part)
    offset += part.length
  }
  for (const e of entries) {
    const name = Buffer.from(e.name)
    const flags = e.descriptor ? 0x08 : 0
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4)
    local.writeUInt16LE(flags, 6)
    local.writeUInt16LE(e.method, 8)
    if (!e.descriptor) {
      local.writeUInt32LE(e.crc, 14)
      local.writeUInt32LE(e.body.byteLength, 18)
      local.writeUInt32LE(e.size, 22)
    }
    local.writeUInt16LE(name.length, 26)
    const at = offset
    add(Buffer.concat([local, name]))
    add(Buffer.from(e.body))
    if (e.descriptor) {
      const descriptor = Buffer.alloc(16)
      descriptor.writeUInt32LE(0x08074b50, 0)
      descriptor.writeUInt32LE(e.crc, 4)
      descriptor.writeUInt32LE(e.body.byteLength, 8)
      descriptor.writeUInt32LE(e.size, 12)
      add(descriptor)
    }
    const header = Buffer.alloc(46)
    header.writeUInt32LE(0x02014b50, 0)
    header.writeUInt16LE(20, 4)
    header.writeUInt16LE(20, 6)
    header.writeUInt16LE(flags, 8)
    header.writeUInt16LE(e.method, 10)
    header.writeUInt32LE(e.crc, 16)
    header.writeUInt32LE(e.body.byteLength, 20)
    header.writeUInt32LE(e.size, 24)
    header.writeUInt16LE(name.length, 28)
    header.writeUInt32LE(at, 42)
    central.push(Buffer.concat([header, name]))
  }
  const directory = Buffer.concat(central)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(entries.length, 8)
  end.writeUInt16LE(entries.length, 10)
  end.writeUInt32LE(directory.length, 12)
  end.writeUInt32LE(offset, 16)
  return new Uint8Array(Buffer.concat([...parts, directory, end]))
}

async function* slicesOf(bytes: Uint8Array, size = 64 * 1024): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.byteLength; at += size) yield bytes.subarray(at, at + size)
}

interface Walked {
  names: string[]
  /** The reports, read whole. */
  reports: Record<string, string>
  /** Bytes seen of the entries that were left after their first 4 KB. */
  looked: Record<string, number>
  error: unknown
}

/**
 * Reads the archive as report-payloads.ts does: each entry's first 4 KB (sniff.ts) tell whether it
 * is a report (read to its end) or not (left there).
 */
async function walk(source: Uint8Array | AsyncIterable<Uint8Array>, limits = LIMITS): Promise<Walked> {
  const walked: Walked = { names: [], reports: {}, looked: {}, error: null }
  try {
    for await (const e of zipEntries(source, limits)) {
      walked.names.push(e.name)
      const iterator = e.chunks[Symbol.asyncIterator]()
      const chunks: Uint8Array[] = []
      let length = 0
      let done = false
      while (length < 4096 && !done) {
        const next = await iterator.next()
        if (next.done) done = true
        else {
          chunks.push(next.value)
          length += next.value.byteLength
        }
      }
      if (new TextDecoder().decode(Buffer.concat(chunks).subarray(0, 5)) !== '<?xml') {
        walked.looked[e.name] = length
        await iterator.return?.()
        continue
      }
      while (!done) {
        const next = await iterator.next()
        if (next.done) done = true
        else chunks.push(next.value)
      }
      walked.reports[e.name] = Buffer.concat(chunks).toString()
    }
  } catch (error) {
    walked.error = error
  }
  return walked
}

function reasonOf(error: unknown) {
  expect(error).toBeInstanceOf(ExtractionError)
  return (error as ExtractionError).reason
}

describe('zipEntries: an entry that is no report is passed over, not inflated', () => {
  test('1,000 MiB of zeros with its size in the local header: skipped by its compressed bytes', async () => {
    const zip = zipOf([zeros('readme.txt', 1000), entry('r.xml', REPORT, 8)])
    expect(zip.byteLength).toBeLessThan(1.1 * MiB)
    const started = performance.now()
    const walked = await walk(slicesOf(zip))
    const elapsed = performance.now() - started
    expect(walked.error).toBeNull()
    expect(walked.names).toEqual(['readme.txt', 'r.xml'])
    expect(walked.reports['r.xml']).toBe(new TextDecoder().decode(REPORT))
    // Its start is inflated from 64 bytes of input (~66 KB at this ratio), not 8 KB (~8 MiB)...
    expect(walked.looked['readme.txt']).toBeLessThanOrEqual(64 * 1032)
    // ...and the rest not at all: inflating it took 15 s (fflate, ~70 MB/s on zeros); this is ~20 ms.
    expect(elapsed).toBeLessThan(2_000)
  })

  test('the same archive through extractReports, as a bare file: the report is found, not no_report_found', async () => {
    const zip = zipOf([zeros('readme.txt', 1000), entry('r.xml', REPORT, 8)])
    const started = performance.now()
    const result = await extractReports(zip, LIMITS)
    expect(performance.now() - started).toBeLessThan(2_000)
    if (!result.ok) throw new Error(`expected the report, got ${JSON.stringify(result.reason)}`)
    expect(result.value.payloads.map((p) => [p.entryName, p.kind])).toEqual([['r.xml', 'aggregate-xml']])
    expect(result.value.skipped).toMatchObject([
      { entryName: 'readme.txt', reason: { code: 'no_report_found' } },
    ])
  })

  test('1,000 MiB of zeros behind general purpose bit 3: skipped to its data descriptor', async () => {
    const zip = zipOf([zeros('readme.txt', 1000, true), entry('r.xml', REPORT, 8, true)])
    const started = performance.now()
    const walked = await walk(slicesOf(zip))
    expect(walked.error).toBeNull()
    expect(walked.names).toEqual(['readme.txt', 'r.xml'])
    expect(walked.reports['r.xml']).toBe(new TextDecoder().decode(REPORT))
    expect(walked.looked['readme.txt']).toBeLessThanOrEqual(64 * 1032)
    expect(performance.now() - started).toBeLessThan(2_000)
  })

  test('bombs behind data descriptors, one after another, are refused past 1 MiB skipped', async () => {
    // Each costs what its first 64 bytes inflate to (~50 KB: the block header is among them); the
    // 21st passes the budget, before maxZipEntries (32) would end the archive.
    const bombs = Array.from({ length: 30 }, (_, i) => zeros(`pad${i}.bin`, 64, true))
    const zip = zipOf([...bombs, entry('r.xml', REPORT, 8, true)])
    const started = performance.now()
    const walked = await walk(slicesOf(zip))
    expect(performance.now() - started).toBeLessThan(3_000)
    expect(reasonOf(walked.error)).toEqual({
      code: 'limit_exceeded',
      limit: 'decompressed_bytes',
      message: `the zip entries skipped had decompressed past the limit of ${MiB} bytes`,
    })
    for (const looked of Object.values(walked.looked)) expect(looked).toBeLessThanOrEqual(64 * 1032)
    expect(walked.names.length).toBeGreaterThanOrEqual(16)
    expect(walked.names.length).toBeLessThan(25)

    // What the worker records for such a message: the limit, not no_report_found.
    const result = await extractReports(zip, LIMITS)
    expect(result).toMatchObject({
      ok: false,
      reason: { code: 'limit_exceeded', limit: 'decompressed_bytes' },
    })
  })

  test('entries that are no report but no bomb stay far inside the budget', async () => {
    // Text that compresses ~4:1, as logs and notes do: ~5 KB each are inflated to tell the format.
    let seed = 1
    const words = ['pass', 'fail', 'none', 'example.net', '192.0.2.1', 'quarantine', 'reject', '\n']
    const text = () =>
      encoder.encode(
        Array.from({ length: 50_000 }, () => {
          seed = (seed * 48271) % 2147483647
          return words[seed % words.length]
        }).join(' '),
      )
    const others = Array.from({ length: 31 }, (_, i) => entry(`notes${i}.txt`, text(), 8, i % 2 === 0))
    const walked = await walk(slicesOf(zipOf([...others, entry('r.xml', REPORT, 8)])))
    expect(walked.error).toBeNull()
    expect(walked.names).toHaveLength(32)
    expect(walked.reports['r.xml']).toBe(new TextDecoder().decode(REPORT))
  })

  test('the event loop turns while a long entry is passed over', async () => {
    // A stored entry behind a data descriptor is found to end by scanning its bytes for the
    // descriptor's signature; 48 MiB of it take long enough for slices to matter.
    const filler = new Uint8Array(48 * MiB).fill(0x20)
    const zip = zipOf([entry('pad.txt', filler, 0, true), entry('r.xml', REPORT, 8, true)])
    let turns = 0
    let running = true
    const spin = () => {
      turns++
      if (running) setImmediate(spin)
    }
    setImmediate(spin)
    // An in-memory source resolves every await as a microtask: only the pauses let timers run.
    const walked = await walk(zip)
    running = false
    expect(walked.error).toBeNull()
    expect(walked.names).toEqual(['pad.txt', 'r.xml'])
    expect(turns).toBeGreaterThan(1)
  })
})

describe('zipEntries: entries that are read', () => {
  const xml = (records: number) => {
    const rows = Array.from(
      { length: records },
      (_, i) =>
        `<record><row><source_ip>192.0.2.${i % 256}</source_ip><count>${i % 17}</count></row></record>`,
    )
    return encoder.encode(`<?xml version="1.0"?><feedback>${rows.join('\n')}</feedback>`)
  }

  test('deflated and stored, with and without data descriptors, read whole', async () => {
    const big = xml(50_000)
    const zip = zipOf([
      entry('a.xml', big, 8),
      entry('b.xml', big, 8, true),
      entry('c.xml', REPORT, 0),
      entry('d.xml', REPORT, 0, true),
      entry('empty.xml', new Uint8Array(0), 8),
      entry('dir/', new Uint8Array(0), 0),
      entry('e.xml', xml(10), 8, true),
    ])
    const walked = await walk(slicesOf(zip, 1000))
    expect(walked.error).toBeNull()
    expect(walked.names).toEqual(['a.xml', 'b.xml', 'c.xml', 'd.xml', 'empty.xml', 'dir/', 'e.xml'])
    const text = new TextDecoder()
    expect(walked.reports['a.xml']).toBe(text.decode(big))
    expect(walked.reports['b.xml']).toBe(text.decode(big))
    expect(walked.reports['c.xml']).toBe(text.decode(REPORT))
    expect(walked.reports['e.xml']).toBe(text.decode(xml(10)))
    expect(walked.looked['empty.xml']).toBe(0)
  })

  test('the entries of one archive together are held to the limit of one report', async () => {
    const part = xml(4_000)
    expect(part.byteLength).toBeGreaterThan(256 * 1024)
    const limit = Math.floor(part.byteLength * 2.5)
    const zip = zipOf([entry('a.xml', part, 8), entry('b.xml', part, 0), entry('c.xml', part, 8)])
    const walked = await walk(zip, { ...LIMITS, maxDecompressedBytes: limit })
    expect(Object.keys(walked.reports)).toEqual(['a.xml', 'b.xml'])
    expect(reasonOf(walked.error)).toEqual({
      code: 'limit_exceeded',
      limit: 'decompressed_bytes',
      message: `the zip archive's entries decompress to more than the limit of ${limit} bytes`,
    })
  })

  test('a deflated entry cut off in its data fails in its stream', async () => {
    const zip = zipOf([entry('a.xml', xml(20_000), 8)])
    const cut = zip.subarray(0, 40 + Math.floor(zip.byteLength / 3))
    const walked = await walk(cut)
    expect(walked.names).toEqual(['a.xml'])
    expect(reasonOf(walked.error).code).toBe('decompression_failed')
  })
})
