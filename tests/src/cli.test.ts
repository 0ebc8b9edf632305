import { afterAll, beforeAll, expect, test } from 'bun:test'
import { runCli } from '../support/processes.ts'
import { createPostgresDatabase } from '../support/test-db.ts'

let database: Awaited<ReturnType<typeof createPostgresDatabase>>
let env: Record<string, string>

beforeAll(async () => {
  database = await createPostgresDatabase()
  env = { DATABASE_URL: database.url, INGEST_DOMAIN: 'in.example.org' }
})
afterAll(() => database.drop())

test('migrate, account create, token create / list / revoke on PostgreSQL', async () => {
  expect((await runCli(['migrate'], env)).code).toBe(0)
  const account = await runCli(
    ['account', 'create', '--email', 'ops@example.org', '--password-stdin'],
    env,
    'correct horse battery\n',
  )
  expect(account.code).toBe(0)
  expect(JSON.parse(account.stdout).report_address).toEndWith('@in.example.org')

  const token = await runCli(
    ['token', 'create', '--email', 'ops@example.org', '--name', 'deploy', '--expires-in-days', '30'],
    env,
  )
  expect(token.code).toBe(0)
  const value = token.stdout.trim()
  expect(value).toMatch(/^dw_/)

  const list = JSON.parse((await runCli(['token', 'list', '--email', 'ops@example.org'], env)).stdout)
  expect(list).toHaveLength(1)
  expect(list[0].name).toBe('deploy')
  expect(JSON.stringify(list)).not.toContain(value)
  const expires = Date.parse(list[0].expires_at)
  expect(Math.abs(expires - (Date.now() + 30 * 86_400_000))).toBeLessThan(60_000)

  const byId = await runCli(['token', 'revoke', '--id', list[0].id, '--email', 'ops@example.org'], env)
  expect(byId.code).toBe(0)
  expect(JSON.parse(byId.stdout).revoked_at).not.toBeNull()
})

test('failures exit non-zero with a one-line reason on stderr', async () => {
  const duplicate = await runCli(['account', 'create', '--email', 'ops@example.org'], env)
  expect(duplicate.code).toBe(1)
  expect(duplicate.stderr.trim()).toBe('An account with this email already exists.')

  const nobody = await runCli(['token', 'create', '--email', 'nobody@example.org', '--name', 'x'], env)
  expect(nobody.code).toBe(1)
  expect(nobody.stderr.trim()).toBe(
    'no user with that e-mail: check --email, or create one with `bun run cli account create --email …`',
  )

  const missing = await runCli(['token', 'create', '--name', 'x'], env)
  expect(missing.code).toBe(2)
  expect(missing.stderr).toContain('--email is required')

  const unknown = await runCli(['frobnicate'], env)
  expect(unknown.code).toBe(2)
  expect(unknown.stderr).toStartWith('unknown command "frobnicate"')
  // Told before the database is opened: a wrong DATABASE_URL does not hide it.
  const unknownAnywhere = await runCli(['account', 'frob'], {
    ...env,
    DATABASE_URL: 'postgres://x@127.0.0.1:1/x',
  })
  expect(unknownAnywhere.code).toBe(2)
  expect(unknownAnywhere.stderr).toStartWith('unknown command "account frob"')
  const help = await runCli(['account', 'create', '--help'], env)
  expect(help.code).toBe(0)
  expect(help.stdout).toContain('usage: bun run cli')

  const badConfig = await runCli(['migrate'], { ...env, PORT: 'eighty' })
  expect(badConfig.code).toBe(1)
  expect(badConfig.stderr).toContain('PORT must be a whole number')
  // For the mail server's pipe a wrong configuration defers the mail (75), never bounces it (1).
  const ingestBadConfig = await runCli(['ingest'], { ...env, PORT: 'eighty' }, 'Subject: x\r\n\r\nx\r\n')
  expect(ingestBadConfig.code).toBe(75)

  // A missing option is a usage error (2), for every command.
  const noDomain = await runCli(['domain', 'verify', '--email', 'ops@example.org'], env)
  expect(noDomain.code).toBe(2)
  expect(noDomain.stderr).toContain('--domain is required')
  expect((await runCli(['account', 'login-link'], env)).code).toBe(2)
  const bothPasswords = await runCli(
    [
      'account',
      'create',
      '--email',
      'two@example.org',
      '--password',
      'a long passphrase',
      '--password-stdin',
    ],
    env,
    'another long passphrase',
  )
  expect(bothPasswords.code).toBe(2)
  expect(bothPasswords.stderr).toContain('not both')

  // An option given twice is refused, not read as its last value (node:util's parseArgs), for
  // every command: the main commands, the domain commands, import and ingest.
  const twice = [
    ['token', 'list', '--email', 'nobody@example.org', '--email', 'ops@example.org'],
    ['domain', 'verify', '--email', 'ops@example.org', '--domain', 'a.example', '--domain', 'b.example'],
    ['import', '--email', 'ops@example.org', '--email', 'ops@example.org', '/nonexistent'],
    ['ingest', '--recipient', 'a@in.example.org', '--recipient', 'b@in.example.org'],
  ]
  for (const args of twice) {
    const result = await runCli(args, env, args[0] === 'ingest' ? 'Subject: x\r\n\r\nx\r\n' : undefined)
    expect({ args, code: result.code }).toEqual({ args, code: 2 })
    expect(result.stderr).toContain('is given more than once')
  }
})

test('ingest accepts a raw message from stdin for a report address, and refuses others', async () => {
  const account = JSON.parse(
    (await runCli(['account', 'create', '--email', 'ingest@example.org'], env)).stdout,
  )
  const raw = await Bun.file('tests/fixtures/dmarc-aggregate/mox/google.eml').text()
  const byFlag = await runCli(['ingest', '--recipient', account.report_address], env, raw)
  expect(byFlag.code).toBe(0)
  expect(JSON.parse(byFlag.stdout)).toEqual({ id: expect.any(String), status: 'accepted' })
  // Without --recipient the Delivered-To header routes it.
  const delivered = await runCli(['ingest'], env, `Delivered-To: ${account.report_address}\r\n${raw}`)
  expect(delivered.code).toBe(0)
  // An empty --recipient (a pipe's variable that came out empty) leaves the headers to name it.
  const emptyFlag = await runCli(
    ['ingest', '--recipient', ''],
    env,
    `Delivered-To: ${account.report_address}\r\nX-Note: again\r\n${raw}`,
  )
  expect(emptyFlag.code).toBe(0)
  const refused = await runCli(['ingest', '--recipient', 'nobody@in.example.org'], env, raw)
  expect(refused.code).toBe(1)
  expect(refused.stderr.trim()).toBe(
    'not accepted: nobody@in.example.org is not a report address of this service',
  )
  expect(refused.stderr.trim().split('\n')).toHaveLength(1)
}, 30_000)
