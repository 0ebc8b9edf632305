import { deflateSync } from 'node:zlib'

// The digest's chart as a PNG (docs/notifications.md "Mail"): mail clients show an inline image
// (a cid: attachment, RFC 2392) where they drop SVG and scripts. Daily volume as stacked bars,
// DMARC pass below and fail above. Encoded here with node:zlib (PNG's compression is zlib, RFC
// 1950/1951), so no image library is needed: an 8-bit palette image (PNG colour type 3) of four
// colours, filter 0 on every row (PNG specification, ISO/IEC 15948 §§ 11.2, 12.8).

const WIDTH = 560
const HEIGHT = 160
const MARGIN = 8
const PALETTE = [
  [255, 255, 255], // background
  [26, 127, 55], // pass
  [207, 34, 46], // fail
  [208, 215, 222], // axis
] as const

const CRC_TABLE = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length)
  const view = new DataView(out.buffer)
  view.setUint32(0, data.length)
  out.set(new TextEncoder().encode(type), 4)
  out.set(data, 8)
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)))
  return out
}

/** A PNG of the given palette-index pixels (rows top to bottom). */
export function encodePalettePng(width: number, height: number, pixels: Uint8Array): Uint8Array {
  const header = new Uint8Array(13)
  const view = new DataView(header.buffer)
  view.setUint32(0, width)
  view.setUint32(4, height)
  header.set([8, 3, 0, 0, 0], 8) // 8-bit depth, palette, deflate, filter method 0, no interlace
  const raw = new Uint8Array(height * (width + 1))
  for (let y = 0; y < height; y++) raw.set(pixels.subarray(y * width, (y + 1) * width), y * (width + 1) + 1)
  const parts = [
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('PLTE', new Uint8Array(PALETTE.flat())),
    chunk('IDAT', new Uint8Array(deflateSync(raw))),
    chunk('IEND', new Uint8Array(0)),
  ]
  const png = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const part of parts) {
    png.set(part, at)
    at += part.length
  }
  return png
}

/** Stacked daily bars: pass (green) at the bottom, fail (red) on top, scaled to the busiest day. */
export function dailyVolumePng(days: readonly { pass: number; fail: number }[]): Uint8Array {
  const pixels = new Uint8Array(WIDTH * HEIGHT)
  const plotHeight = HEIGHT - 2 * MARGIN
  const base = HEIGHT - MARGIN
  for (let x = MARGIN; x < WIDTH - MARGIN; x++) pixels[base * WIDTH + x] = 3
  const max = Math.max(1, ...days.map((d) => d.pass + d.fail))
  const slot = (WIDTH - 2 * MARGIN) / Math.max(1, days.length)
  const barWidth = Math.max(1, Math.floor(slot * 0.7))
  days.forEach((day, i) => {
    const left = Math.round(MARGIN + i * slot + (slot - barWidth) / 2)
    const passHeight = Math.round((day.pass / max) * plotHeight)
    const totalHeight = Math.round(((day.pass + day.fail) / max) * plotHeight)
    for (let h = 0; h < totalHeight; h++) {
      const colour = h < passHeight ? 1 : 2
      const row = (base - 1 - h) * WIDTH
      for (let x = left; x < left + barWidth; x++) pixels[row + x] = colour
    }
  })
  return encodePalettePng(WIDTH, HEIGHT, pixels)
}

export const CHART_SIZE = { width: WIDTH, height: HEIGHT }
