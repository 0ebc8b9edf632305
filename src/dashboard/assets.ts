import { readFileSync } from 'node:fs'

// The dashboard's stylesheet and script (and the upload page's), and uPlot (the chart library) for pages with a chart,
// served by the app itself (no CDN: CSP 'self', works offline). Their URLs carry a content hash,
// so they are cached for a year and a new release changes the URL; the hash doubles as the ETag.

export interface Asset {
  path: string
  body: Uint8Array<ArrayBuffer>
  type: string
  etag: string
}

function load(source: URL | string, name: string, extension: string, type: string): Asset {
  const body = new Uint8Array(readFileSync(source))
  const hash = new Bun.CryptoHasher('sha256').update(body).digest('hex').slice(0, 16)
  return { path: `/assets/${name}.${hash}.${extension}`, body, type, etag: `"${hash}"` }
}

const CSS = 'text/css; charset=utf-8'
const JS = 'text/javascript; charset=utf-8'

// Resolved like an import, so it finds node_modules wherever the package manager put uplot
// (the repository's node_modules with `bun src/main.ts`, a hoisted one in a workspace).
const uplot = (file: string) => new URL(import.meta.resolve(`uplot/dist/${file}`))

export const ASSETS = {
  css: load(new URL('./assets/app.css', import.meta.url), 'app', 'css', CSS),
  js: load(new URL('./assets/app.js', import.meta.url), 'app', 'js', JS),
  uploadJs: load(new URL('./assets/upload.js', import.meta.url), 'upload', 'js', JS),
  uplotCss: load(uplot('uPlot.min.css'), 'uplot', 'css', CSS),
  uplotJs: load(uplot('uPlot.iife.min.js'), 'uplot', 'js', JS),
}

export function assetResponse(name: string, ifNoneMatch: string | null): Response {
  const asset = Object.values(ASSETS).find((candidate) => candidate.path === `/assets/${name}`)
  if (asset === undefined) {
    return new Response('Not found', {
      status: 404,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
    })
  }
  const headers = {
    'cache-control': 'public, max-age=31536000, immutable',
    etag: asset.etag,
    'x-content-type-options': 'nosniff',
  }
  if (ifNoneMatch === asset.etag) return new Response(null, { status: 304, headers })
  return new Response(asset.body, { headers: { ...headers, 'content-type': asset.type } })
}
