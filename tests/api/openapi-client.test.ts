import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtemp, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pgAlertStore } from '../../infrastructure/repositories/pg-alert-store.ts'
import { type DnsTestServer, startDnsServer } from '../support/dns-server.ts'
import { startTestApp, type TestAccount, type TestApp } from '../support/test-app.ts'

// A client generated from the served document, as docs/api.md ("Generated client") tells API
// consumers to make one: types from openapi-typescript (tools/openapi-types.ts), a program using
// openapi-fetch that type-checks with tsc, run against the service listening on a free port.

const ROOT = new URL('../../', import.meta.url).pathname

// What a consumer writes. Every call is typed by the generated `paths`: a wrong path, field or
// value does not compile (the @ts-expect-error lines prove tsc checks against them).
const CLIENT_PROGRAM = `import createClient from 'openapi-fetch'
import type { components, paths } from './dmarcwatch-api.d.ts'

type Domain = components['schemas']['Domain']
type Alert = components['schemas']['Alert']

export async function smoke(baseUrl: string, token: string, domainName: string) {
  const client = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${token}\` } })

  const created = await client.POST('/api/v1/domains', {
    body: { domain_name: domainName, automation_level: 'manual' },
  })
  if (created.error !== undefined) throw new Error(\`create: \${JSON.stringify(created.error)}\`)
  const domain: Domain = created.data.data
  const verifiedAt: string | null = domain.verified_at

  const listed = await client.GET('/api/v1/domains', { params: { query: { per_page: 10 } } })
  if (listed.error !== undefined) throw new Error('list')
  const names: string[] = listed.data.data.map((d) => d.name)

  const status = await client.GET('/api/v1/domains/{name}/status', { params: { path: { name: domain.name } } })
  if (status.error !== undefined) throw new Error('status')
  const grade: 'A' | 'B' | 'C' | 'D' | 'F' = status.data.data.grade
  const score: number = status.data.data.score

  const open = await client.GET('/api/v1/alerts', { params: { query: { status: 'open' } } })
  if (open.error !== undefined) throw new Error('alerts')
  const first: Alert | undefined = open.data.data[0]
  if (first === undefined) throw new Error('no alert')
  const resolved = await client.POST('/api/v1/alerts/{alert}/resolve', {
    params: { path: { alert: first.alert_id } },
  })
  if (resolved.error !== undefined) throw new Error('resolve')
  const resolution: 'condition_cleared' | 'user' | null = resolved.data.data.resolution

  return { name: domain.name, verifiedAt, names, grade, score, alertId: first.alert_id, status: resolved.data.data.status, resolution }
}

export async function typedOnly(client: ReturnType<typeof createClient<paths>>) {
  // @ts-expect-error automation_level is one of manual, assisted, automatic
  await client.POST('/api/v1/domains', { body: { domain_name: 'x.example', automation_level: 'sometimes' } })
  // @ts-expect-error there is no such path
  await client.GET('/api/v1/domain')
  const listed = await client.GET('/api/v1/domains')
  // @ts-expect-error the list is under data, each item has no camelCase keys
  listed.data?.data[0]?.verifiedAt
}
`

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'Preserve',
    moduleResolution: 'bundler',
    lib: ['ES2022', 'DOM'],
    strict: true,
    noEmit: true,
    allowImportingTsExtensions: true,
    skipLibCheck: false,
    types: [],
  },
  include: ['*.ts'],
}

let dns: DnsTestServer
let t: TestApp
let owner: TestAccount
let dir: string
let baseUrl: string

async function run(cmd: string[], cwd: string) {
  const child = Bun.spawn(cmd, { cwd, env: process.env, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  return { code, output: `${stdout}${stderr}` }
}

beforeAll(async () => {
  dns = await startDnsServer({
    'client.example': [
      { type: 'TXT', data: 'v=spf1 -all' },
      { type: 'MX', data: { preference: 10, exchange: 'mx.client.example' } },
    ],
    'mx.client.example': [{ type: 'A', data: '192.0.2.40' }],
  })
  t = await startTestApp({ DNS_SERVERS: `127.0.0.1:${dns.port}`, DNS_TIMEOUT_MS: '300' })
  owner = await t.account()
  t.app.listen({ port: 0, hostname: '127.0.0.1' })
  baseUrl = `http://127.0.0.1:${t.app.server!.port}`
  dir = await mkdtemp(join(tmpdir(), 'dw-openapi-client-'))
  // The program resolves openapi-fetch (and tsc its types) from the project's dependencies.
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
}, 60_000)
afterAll(async () => {
  await t.app.stop(true)
  await t.close()
  await dns.stop()
  await rm(dir, { recursive: true, force: true })
})

test('a client generated with openapi-typescript type-checks and drives the API through openapi-fetch', async () => {
  const generated = await run(
    [
      process.execPath,
      join(ROOT, 'tools/openapi-types.ts'),
      `${baseUrl}/openapi/json`,
      'dmarcwatch-api.d.ts',
    ],
    dir,
  )
  expect(generated.code, generated.output).toBe(0)
  const types = await Bun.file(join(dir, 'dmarcwatch-api.d.ts')).text()
  expect(types).toContain('"/api/v1/domains/{name}/status"')

  await Bun.write(join(dir, 'client.ts'), CLIENT_PROGRAM)
  // The example of docs/api.md ("Generated client") must compile too.
  const docs = await Bun.file(join(ROOT, 'docs/api.md')).text()
  const example = /## Generated client[\s\S]*?```ts\n([\s\S]*?)```/.exec(docs)?.[1]
  expect(example).toContain('createClient<paths>')
  await Bun.write(join(dir, 'docs-example.ts'), example!)
  await Bun.write(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG))
  const checked = await run([join(ROOT, 'node_modules/.bin/tsc'), '-p', 'tsconfig.json'], dir)
  expect(checked.output).toBe('')
  expect(checked.code).toBe(0)

  // The alert the program resolves: an account-wide one, opened as an evaluation would open it
  // (tests/api/alerts.test.ts).
  await pgAlertStore(t.db.database.db).applyPlan(
    owner.accountId,
    null,
    {
      create: [
        {
          type: 'webhook_delivery_failing',
          subject: '',
          severity: 'high',
          title: 'Webhook deliveries are failing',
          details: { evidence: { failing_deliveries: 3 }, remedy: 'Check the endpoint.' },
        },
      ],
      update: [],
      resolve: [],
    },
    new Date(),
  )
  const seeded = await t.request('POST', '/api/v1/domains', {
    token: owner.token,
    body: { domain_name: 'seeded.client.example' },
  })
  expect(seeded.status).toBe(201)

  const client = (await import(join(dir, 'client.ts'))) as {
    smoke(baseUrl: string, token: string, name: string): Promise<Record<string, unknown>>
  }
  const result = await client.smoke(baseUrl, owner.token, 'client.example')
  expect(result).toMatchObject({
    name: 'client.example',
    verifiedAt: null,
    status: 'resolved',
    resolution: 'user',
  })
  expect(result.names).toContain('client.example')
  expect(result.names).toContain('seeded.client.example')
  expect(['A', 'B', 'C', 'D', 'F']).toContain(result.grade as string)
}, 120_000)
