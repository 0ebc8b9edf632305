import { expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { jsonLogger } from '../../infrastructure/logging/json-logger.ts'
import { errorMapping, serverErrorOptions } from '../../plugins/errors.ts'

// The error mapping is the last line: whatever goes wrong in it or around it, the answer is the JSON
// 500 with nothing of the failure in it, never Bun's development page (stack, source, directory).

const LEAK = /boom|\.ts:\d+|<html|"stack"|node_modules/i

test('an error thrown while mapping an error is still the JSON 500', async () => {
  const lines: string[] = []
  const app = new Elysia()
    .use(
      errorMapping({
        logger: jsonLogger('error', (line) => lines.push(line)),
        allowedMethods: () => {
          throw new Error('boom in the route table')
        },
      }),
    )
    .get('/here', () => 'ok')
  const response = await app.handle(new Request('http://localhost/not-here'))
  expect(response.status).toBe(500)
  const text = await response.text()
  expect(JSON.parse(text)).toMatchObject({ error: 'internal_error' })
  expect(text).not.toMatch(LEAK)
  expect(lines.join('\n')).toContain('boom in the route table')
})

test('anything escaping the app meets a JSON 500 from the server, not a stack page', async () => {
  const lines: string[] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch() {
      throw new Error(`boom at ${import.meta.path}:1`)
    },
    ...serverErrorOptions(jsonLogger('error', (line) => lines.push(line))),
  })
  try {
    const response = await fetch(`http://127.0.0.1:${server.port}/`)
    expect(response.status).toBe(500)
    expect(response.headers.get('content-type')).toStartWith('application/json')
    const text = await response.text()
    expect(JSON.parse(text)).toMatchObject({ error: 'internal_error' })
    expect(text).not.toMatch(LEAK)
    expect(lines.join('\n')).toContain('boom at')
  } finally {
    server.stop(true)
  }
})
