import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestApp, type TestApp } from '../support/test-app.ts'

// The document the service serves passes Redocly CLI's recommended rules with no error
// (redocly.yaml; docs/api.md, "OpenAPI document").

const ROOT = new URL('../../', import.meta.url).pathname
let t: TestApp
let dir: string

beforeAll(async () => {
  t = await startTestApp()
  dir = await mkdtemp(join(tmpdir(), 'dw-openapi-lint-'))
}, 60_000)
afterAll(async () => {
  await t.close()
  await rm(dir, { recursive: true, force: true })
})

interface LintReport {
  totals: { errors: number; warnings: number }
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[]
}

test('the OpenAPI document lints with zero errors under the recommended rules', async () => {
  const served = await t.request('GET', '/openapi/json')
  expect(served.status).toBe(200)
  const file = join(dir, 'openapi.json')
  await Bun.write(file, JSON.stringify(served.body))

  const child = Bun.spawn(
    [
      process.execPath,
      join(ROOT, 'node_modules/@redocly/cli/bin/cli.js'),
      'lint',
      `--config=${join(ROOT, 'redocly.yaml')}`,
      '--format=json',
      '--max-problems=10000',
      file,
    ],
    {
      cwd: dir,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      stdout: 'pipe',
      stderr: 'pipe',
    },
  )
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  const report = JSON.parse(stdout) as LintReport
  const errors = report.problems
    .filter((p) => p.severity === 'error')
    .map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`)
  expect(errors).toEqual([])
  expect(report.totals.errors).toBe(0)
  expect(code, stderr).toBe(0)
  // The linter did read the document: every path and model of it.
  expect(stderr).toContain('validated')
}, 60_000)
