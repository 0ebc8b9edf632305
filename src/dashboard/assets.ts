import { readFileSync } from 'node:fs'

// The dashboard's only stylesheet and script, served by the app itself (no CDN: CSP 'self', works
// offline). Their URLs carry a content hash, so they are cached for a year and a new release
// changes the URL; the hash doubles as the ETag.

export interface Asset {
  path: string
  body: Uint8Array<ArrayBuffer>
  type: string
  etag: string
}

function load(file: string, extension: string, type: string): Asset {
  const body = new Uint8Array(readFileSync(new URL(`./assets/${file}`, import.meta.url)))
  const hash = new Bun.CryptoHasher('sha256').update(body).digest('hex').slice(0, 16)
  return { path: `/assets/app.${hash}.${extension}`, body, type, etag: `"${hash}"` }
}

export const ASSETS = {
  css: load('app.css', 'css', 'text/css; charset=utf-8'),
  js: load('app.js', 'js', 'text/javascript; charset=utf-8'),
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
