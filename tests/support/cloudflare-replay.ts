// A local stand-in for api.cloudflare.com/client/v4 that replays recorded responses from
// tests/fixtures/cloudflare/ (written from Cloudflare's public API v4 documentation, see SOURCES.md)
// and records every request, so a test can check both what the adapter sent and how it read the
// answer. No real Cloudflare account is reachable from the test environment.

import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const FIXTURES = new URL('../fixtures/cloudflare/', import.meta.url).pathname

/** Facts of the recorded account the tests refer to. */
export const RECORDED = {
  zone: { id: '5ababd603b22780302dd8d83498e5172', name: 'example.com' },
  records: '/zones/5ababd603b22780302dd8d83498e5172/dns_records',
  token: 'Y2xvdWRmbGFyZS10ZXN0LXRva2VuLTAwMDAwMDAwMDA',
  spfRecordId: '5c3a2b4d8e3f6a7b0c1d2e3f4a5b6c7d',
  spf: 'v=spf1 ip4:192.0.2.0/24 ip4:198.51.100.0/24 ip4:203.0.113.0/24 include:_spf.google.com include:spf.protection.outlook.com include:sendgrid.net include:mailgun.org include:servers.mcsv.net include:amazonses.com include:_spf.salesforce.com include:spf.mandrillapp.com ~all',
}

export interface Recorded {
  status: number
  headers?: Record<string, string>
  body: unknown
}

export interface ReplayRoute {
  method: string
  /** The path below /client/v4, e.g. `/zones`. */
  path: string
  /** Query parameters the request must carry (others are ignored). */
  query?: Record<string, string>
  /** A file in tests/fixtures/cloudflare/. */
  fixture: string
  /** Served once, then the route is skipped (for sequences like "429, then 200"). */
  once?: boolean
}

export interface ReceivedRequest {
  method: string
  path: string
  query: Record<string, string>
  authorization: string | null
  body: unknown
}

export interface CloudflareReplay {
  /** The base URL to give the adapter (`http://127.0.0.1:<port>/client/v4`). */
  baseUrl: string
  requests: ReceivedRequest[]
  /** Requests no route matched (answered 404, code 7000). */
  unmatched: ReceivedRequest[]
  stop(): Promise<void>
}

export function fixture(name: string): Recorded {
  return JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')) as Recorded
}

export function startCloudflareReplay(routes: ReplayRoute[]): CloudflareReplay {
  const requests: ReceivedRequest[] = []
  const unmatched: ReceivedRequest[] = []
  const used = new Set<ReplayRoute>()
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const url = new URL(request.url)
      const text = await request.text()
      const received: ReceivedRequest = {
        method: request.method,
        path: url.pathname.replace(/^\/client\/v4/, ''),
        query: Object.fromEntries(url.searchParams),
        authorization: request.headers.get('authorization'),
        body: text === '' ? undefined : JSON.parse(text),
      }
      requests.push(received)
      const route = routes.find(
        (r) =>
          !(r.once && used.has(r)) &&
          r.method === received.method &&
          r.path === received.path &&
          Object.entries(r.query ?? {}).every(([key, value]) => received.query[key] === value),
      )
      if (!route) {
        unmatched.push(received)
        const body = {
          success: false,
          errors: [{ code: 7000, message: 'No route for that URI' }],
          messages: [],
        }
        return Response.json({ ...body, result: null }, { status: 404 })
      }
      used.add(route)
      const recorded = fixture(route.fixture)
      return Response.json(recorded.body, { status: recorded.status, headers: recorded.headers })
    },
  })
  return {
    baseUrl: `http://127.0.0.1:${server.port}/client/v4`,
    requests,
    unmatched,
    stop: () => server.stop(true),
  }
}
