import { expect, test } from 'bun:test'
import { inflateSync } from 'node:zlib'
import { dailyVolumePng, encodePalettePng } from '../../../infrastructure/mail/png-chart.ts'

// The digest's chart encoder (docs/notifications.md "The digest"): a valid PNG by the
// specification's own checks (signature, chunk CRCs, IHDR, the zlib stream of filtered rows), and
// bars where the figures put them. Bun's image decoding is not used, so the test reads the chunks.

function chunks(png: Uint8Array) {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength)
  const out: { type: string; data: Uint8Array }[] = []
  for (let at = 8; at < png.length; ) {
    const length = view.getUint32(at)
    const type = new TextDecoder().decode(png.subarray(at + 4, at + 8))
    const data = png.subarray(at + 8, at + 8 + length)
    const crc = view.getUint32(at + 8 + length)
    expect(crc).toBe(Bun.hash.crc32(png.subarray(at + 4, at + 8 + length)))
    out.push({ type, data })
    at += 12 + length
  }
  return out
}

test('a palette PNG: signature, IHDR, PLTE, IDAT of filtered rows, IEND, every CRC right', () => {
  const pixels = new Uint8Array([0, 1, 2, 3, 3, 2, 1, 0])
  const png = encodePalettePng(4, 2, pixels)
  expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  const parts = chunks(png)
  expect(parts.map((c) => c.type)).toEqual(['IHDR', 'PLTE', 'IDAT', 'IEND'])
  const ihdr = new DataView(parts[0]!.data.buffer, parts[0]!.data.byteOffset)
  expect([ihdr.getUint32(0), ihdr.getUint32(4), ...parts[0]!.data.subarray(8)]).toEqual([4, 2, 8, 3, 0, 0, 0])
  expect([...inflateSync(parts[2]!.data)]).toEqual([0, 0, 1, 2, 3, 0, 3, 2, 1, 0])
})

test('daily bars: pass at the bottom, fail on top, the busiest day full height', () => {
  const png = dailyVolumePng([
    { pass: 10, fail: 10 },
    { pass: 0, fail: 0 },
  ])
  const raw = inflateSync(chunks(png).find((c) => c.type === 'IDAT')!.data)
  const width = 560
  const at = (x: number, y: number) => raw[y * (width + 1) + 1 + x]
  const middleOfFirstBar = 8 + 136
  expect(at(middleOfFirstBar, 150)).toBe(1) // just above the axis: pass
  expect(at(middleOfFirstBar, 10)).toBe(2) // near the top: fail
  expect(at(middleOfFirstBar + 272, 150)).toBe(0) // the empty day: background
  expect(at(100, 152)).toBe(3) // the axis
})
