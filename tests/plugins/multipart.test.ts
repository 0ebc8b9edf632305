import { describe, expect, test } from 'bun:test'
import { boundaryOf, formParts, MultipartError, readFormHead } from '../../plugins/multipart.ts'

// The streaming multipart/form-data reader of the dashboard upload: bodies as browsers (and Bun's
// own FormData) write them, cut into chunks anywhere, come out byte for byte; a malformed or
// cut-off body is an error, never parts made up.

/** A FormData serialised the way fetch sends it, with its Content-Type. */
async function serialise(form: FormData): Promise<{ bytes: Uint8Array; type: string }> {
  const request = new Request('http://localhost/', { method: 'POST', body: form })
  // Read first: Bun forgets a FormData body's Content-Type once the body is read.
  const type = request.headers.get('content-type')!
  return { bytes: new Uint8Array(await request.arrayBuffer()), type }
}

async function* chunked(bytes: Uint8Array, sizes: () => number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.byteLength; ) {
    const size = Math.max(1, sizes())
    yield bytes.slice(at, at + size)
    at += size
  }
}

/** A ReadableStream (what a request body is) of the chunks, pulled one at a time. */
function streamOf(chunks: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const iterator = chunks[Symbol.asyncIterator]()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next()
      if (next.done) controller.close()
      else controller.enqueue(next.value)
    },
  })
}

async function partsOf(source: AsyncIterable<Uint8Array>, boundary: string) {
  const parts: { name: string; filename: string | null; bytes: Buffer }[] = []
  for await (const part of formParts(source, boundary)) {
    parts.push({
      name: part.name,
      filename: part.filename,
      bytes: Buffer.concat(await Array.fromAsync(part.body)),
    })
  }
  return parts
}

function noise(size: number, seed: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(size)
  let x = seed
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0
    bytes[i] = x >>> 24
  }
  return bytes
}

describe('formParts', () => {
  test('a form of text and binary files, in chunks of every size, comes out byte for byte', async () => {
    const form = new FormData()
    form.append('_csrf', 'token-value')
    const binary = noise(300_000, 1)
    form.append('files', new File([binary], 'report.xml.gz'))
    form.append('files', new File([new Uint8Array(0)], 'empty.xml'))
    form.append('files', new File(['<feedback/>\r\n'], 'C:\\Users\\me\\a.xml'))
    const { bytes, type } = await serialise(form)
    const boundary = boundaryOf(type)!
    // Content that nearly matches the delimiter must stay content.
    const tricky = new TextEncoder().encode(`x\r\n--${boundary.slice(0, -1)}y\r\n-\r\n--`)
    const withTricky = new FormData()
    withTricky.append('files', new File([tricky], 'tricky.bin'))
    const second = await serialise(withTricky)
    for (const sizes of [() => 1, () => 7, () => 64 * 1024, () => Math.floor(Math.random() * 5000)]) {
      const parts = await partsOf(chunked(bytes, sizes), boundary)
      expect(parts.map(({ name, filename }) => [name, filename])).toEqual([
        ['_csrf', null],
        ['files', 'report.xml.gz'],
        ['files', 'empty.xml'],
        ['files', 'C:\\Users\\me\\a.xml'],
      ])
      expect(parts[0]!.bytes.toString()).toBe('token-value')
      expect(parts[1]!.bytes.equals(binary)).toBe(true)
      expect(parts[2]!.bytes.byteLength).toBe(0)
      expect(parts[3]!.bytes.toString()).toBe('<feedback/>\r\n')
      const [file] = await partsOf(chunked(second.bytes, sizes), boundaryOf(second.type)!)
      expect(file!.bytes.equals(tricky)).toBe(true)
    }
  })

  test('a part the caller does not read is skipped; preamble and epilogue are ignored', async () => {
    const body = new TextEncoder().encode(
      'preamble\r\n--B\r\nContent-Disposition: form-data; name="a"\r\n\r\nskipped\r\n' +
        '--B  \r\nContent-Disposition: form-data; name="b"; filename="b.txt"\r\nContent-Type: text/plain\r\n\r\nkept\r\n' +
        '--B--\r\nepilogue',
    )
    const seen: string[] = []
    for await (const part of formParts(
      chunked(body, () => 3),
      'B',
    )) {
      if (part.name === 'b') seen.push(Buffer.concat(await Array.fromAsync(part.body)).toString())
      else seen.push(`(${part.name} unread)`)
    }
    expect(seen).toEqual(['(a unread)', 'kept'])
  })

  test('a cut-off or malformed body is a MultipartError', async () => {
    const cases = [
      'no boundary at all',
      '--B\r\nContent-Disposition: form-data; name="a"\r\n\r\nnever closed',
      '--B\r\nContent-Disposition: form-data; name="a"',
      '--Bx\r\n\r\nthe boundary runs on\r\n--B--',
      `--B\r\n${'X-Long: y\r\n'.repeat(2000)}\r\nheader block too long\r\n--B--`,
    ]
    for (const text of cases) {
      const attempt = partsOf(
        chunked(new TextEncoder().encode(text), () => 100),
        'B',
      )
      await expect(attempt).rejects.toBeInstanceOf(MultipartError)
    }
  })

  test('boundaryOf reads a plain or quoted boundary', () => {
    expect(boundaryOf('multipart/form-data; boundary=----abc')).toBe('----abc')
    expect(boundaryOf('multipart/form-data; charset=utf-8; boundary="a b:c"')).toBe('a b:c')
    expect(boundaryOf('multipart/form-data')).toBeNull()
    expect(boundaryOf(`multipart/form-data; boundary=${'x'.repeat(71)}`)).toBe('x'.repeat(70))
  })
})

describe('readFormHead', () => {
  const stream = (bytes: Uint8Array, size = 1000) => streamOf(chunked(bytes, () => size))

  test('reads the fields before the first file, leaves the rest unread, and replays the whole body', async () => {
    const form = new FormData()
    form.append('_csrf', 'tok')
    form.append('note', 'café ☕')
    form.append('files', new File([noise(200_000, 2)], 'a.bin'))
    form.append('after', 'not read here')
    const { bytes, type } = await serialise(form)
    let pulled = 0
    async function* counting() {
      for await (const chunk of chunked(bytes, () => 1000)) {
        pulled += chunk.byteLength
        yield chunk
      }
    }
    const counted = streamOf(counting())
    const head = await readFormHead(counted, type, 64 * 1024)
    if (!head.ok) throw new Error(head.problem)
    expect([...head.form]).toEqual([
      ['_csrf', 'tok'],
      ['note', 'café ☕'],
    ])
    expect(pulled).toBeLessThan(5000)
    const replayed = Buffer.concat(await Array.fromAsync(head.form.body))
    expect(replayed.equals(bytes)).toBe(true)
  })

  test('a head over its limit, a field that is not UTF-8, and a body that is no multipart', async () => {
    const big = new FormData()
    big.append('pad', 'x'.repeat(100_000))
    big.append('files', new File(['x'], 'a.xml'))
    const large = await serialise(big)
    expect(await readFormHead(stream(large.bytes), large.type, 10_000)).toEqual({
      ok: false,
      problem: 'too_large',
    })

    const bad = new Uint8Array([
      ...new TextEncoder().encode('--B\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\nX'),
      0xff,
      ...new TextEncoder().encode('Y\r\n--B--\r\n'),
    ])
    const type = 'multipart/form-data; boundary=B'
    expect(await readFormHead(stream(bad), type, 10_000)).toEqual({ ok: false, problem: 'not_utf8' })
    const junk = new TextEncoder().encode('_csrf=tok')
    expect(await readFormHead(stream(junk), type, 10_000)).toEqual({ ok: false, problem: 'malformed' })
    expect(await readFormHead(stream(junk), 'multipart/form-data', 10_000)).toEqual({
      ok: false,
      problem: 'malformed',
    })
  })
})
