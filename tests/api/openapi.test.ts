import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestApp, type TestApp } from '../support/test-app.ts'

let t: TestApp
let spec: any

beforeAll(async () => {
  t = await startTestApp()
  spec = (await t.request('GET', '/openapi/json')).body
}, 60_000)
afterAll(() => t.close())

test('OpenAPI 3.1 with the bearer security scheme', () => {
  expect(spec.openapi).toStartWith('3.1')
  expect(spec.components.securitySchemes.bearerAuth).toEqual(
    expect.objectContaining({ type: 'http', scheme: 'bearer' }),
  )
})

test('every API route is documented with a summary, security and its error responses', () => {
  const apiRoutes = t.app.routes.filter((r) => r.path.startsWith('/api/v1'))
  expect(apiRoutes.length).toBeGreaterThan(0)
  for (const route of apiRoutes) {
    const path = route.path.replace(/:(\w+)/g, '{$1}')
    const operation = spec.paths[path]?.[route.method.toLowerCase()]
    expect(operation, `${route.method} ${path}`).toBeDefined()
    expect(operation.summary).toBeString()
    expect(operation.security).toEqual([{ bearerAuth: [] }])
    for (const status of ['400', '401', '429']) expect(Object.keys(operation.responses)).toContain(status)
  }
})

test('named models are registered and referenced', () => {
  for (const name of [
    'Domain',
    'DomainItem',
    'DomainList',
    'Organization',
    'Error',
    'ValidationError',
    'RateLimitError',
  ]) {
    expect(spec.components.schemas[name], name).toBeDefined()
  }
  const create = spec.paths['/api/v1/domains'].post
  expect(JSON.stringify(create.requestBody)).toContain('DomainCreate')
})

test('the interactive reference is served at /swagger', async () => {
  const res = await t.app.handle(new Request('http://localhost/swagger'))
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toContain('text/html')
  const html = await res.text()
  expect(html).toContain('openapi/json')
  // No CDN: every script and stylesheet comes from the app itself.
  expect(html).not.toMatch(/(src|href)="https?:/)
  for (const asset of ['swagger-ui-bundle.js', 'swagger-ui.css']) {
    const served = await t.app.handle(new Request(`http://localhost/swagger-assets/${asset}`))
    expect(served.status).toBe(200)
    expect((await served.text()).length).toBeGreaterThan(10_000)
  }
  expect((await t.app.handle(new Request('http://localhost/swagger-assets/..%2fpackage.json'))).status).toBe(
    404,
  )
})
