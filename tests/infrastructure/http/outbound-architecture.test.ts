import { expect, test } from 'bun:test'
import { Glob } from 'bun'

// Every outbound HTTP request goes through the guarded client (docs/outbound-http.md). This test
// fails when server code reaches the network another way: the global fetch, Node's http/https,
// undici, or a library's own sending path that the guarded client cannot sit under.

/** The one transport: the guarded client's pinned request. */
const TRANSPORT = 'infrastructure/http/pinned-fetch.ts'
/** Runs in browsers (the sites that embed the widget, the dashboard's upload page), not on the server. */
const BROWSER_CODE = new Set(['src/embed/widget.js', 'src/dashboard/assets/upload.js'])
/**
 * Talks only to this host's own service, over the Unix socket in DATA_DIR (`fetch` with `unix:`):
 * no network, so no SSRF surface (docs/ingestion.md, "The CLI pipe").
 */
const LOCAL_SOCKET = new Set(['infrastructure/mail/intake-socket.ts'])

const FORBIDDEN: [RegExp, string][] = [
  [/(^|[^.\w])fetch\s*\(/m, 'calls the global fetch'],
  [/\b(globalThis|Bun|window)\.fetch\b/, 'uses a global fetch'],
  [/from\s+['"](node:)?(http|https|http2)['"]/, 'imports Node’s HTTP client modules'],
  [/from\s+['"](undici|axios|node-fetch|got|ky)['"]/, 'imports an HTTP client library'],
  [/\bnew\s+(XMLHttpRequest|WebSocket)\b/, 'opens a connection of its own'],
  // arctic sends its token requests with the global fetch and takes no other (code-flow.ts).
  [/\.validateAuthorizationCode\(|\.refreshAccessToken\(|\.revokeToken\(/, 'lets arctic send a request'],
]

function code(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1')
}

test('no module but the guarded client’s transport sends HTTP requests itself', async () => {
  const problems: string[] = []
  let files = 0
  for (const dir of ['domain', 'infrastructure', 'plugins', 'src']) {
    for await (const file of new Glob(`${dir}/**/*.{ts,js}`).scan('.')) {
      if (file === TRANSPORT || BROWSER_CODE.has(file) || LOCAL_SOCKET.has(file)) continue
      files++
      const source = code(await Bun.file(file).text())
      for (const [pattern, what] of FORBIDDEN) if (pattern.test(source)) problems.push(`${file}: ${what}`)
      // jose fetches key sets itself unless it is handed the guarded client as its fetch.
      if (/createRemoteJWKSet\(/.test(source) && !/\[customFetch\]:\s*asFetch\(/.test(source))
        problems.push(`${file}: a remote JWKS without the guarded client as its fetch`)
    }
  }
  expect(files).toBeGreaterThan(50)
  expect(problems).toEqual([])
})

test('the transport is used by the guarded client only', async () => {
  const users: string[] = []
  for (const dir of ['domain', 'infrastructure', 'plugins', 'src']) {
    for await (const file of new Glob(`${dir}/**/*.ts`).scan('.')) {
      if (/pinned-fetch(\.ts)?['"]/.test(await Bun.file(file).text())) users.push(file)
    }
  }
  expect(users).toEqual(['infrastructure/http/guarded-client.ts'])
})

test('the check sees what it forbids', () => {
  expect(FORBIDDEN[0]![0].test(code('const r = await fetch(url)'))).toBe(true)
  expect(FORBIDDEN[0]![0].test(code('// fetch(url) in a comment'))).toBe(false)
  expect(FORBIDDEN[0]![0].test(code('const fetched = client.fetch(url)'))).toBe(false)
  expect(FORBIDDEN[1]![0].test(code('await globalThis.fetch(url)'))).toBe(true)
})
