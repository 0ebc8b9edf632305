import { errorLine } from '../domain/shared/logger.ts'
import type { Database } from '../infrastructure/db/database.ts'
import { CliError, CliUsageError, describe } from './cli/errors.ts'
import { parseOptions } from './cli/options.ts'
import {
  EX_TEMPFAIL,
  type IngestMessage,
  type IngestOutcome,
  ingestThroughService,
  ingestWithDatabase,
  printable,
  readMessage,
} from './cli-ingest.ts'
import { type Config, ConfigError, loadConfig } from './config.ts'

// `bun run cli <command>`. Results go to stdout (JSON, or a bare token value); problems go to
// stderr as one line, with a non-zero exit code.
//
// The database side (stores, use cases, PGlite) is imported only when a command needs it: a message
// handed to the running service (src/cli-ingest.ts) costs a mail server's pipe ~0.02 s of CPU
// instead of ~0.6 s, which matters when it spawns dozens at once.

const USAGE = `usage: bun run cli <command>
  migrate                                            apply database migrations
  account create --email E [--password P | --password-stdin]
                                                     create an account and its owner; prints JSON
                                                     (without a password: a one-time sign-in link)
  token create --email E --name N [--expires-in-days D]
                                                     prints the new API token alone on stdout
  token revoke (--token VALUE | --id ID --email E)   revoke a token
  token list --email E                               list the account's tokens as JSON (no secrets)
  ingest [--recipient ADDRESS] [--direct] < message.eml
                                                     accept one raw report email (MTA pipe transport);
                                                     recipient defaults to Delivered-To / X-Original-To / To;
                                                     handed to a running service unless --direct; exit 75
                                                     when it could not be stored now (retry later)
  demo --email E [--remove]                          add the demo domain with 30 days of generated reports
                                                     (sent through the intake), or remove it
  account login-link --email E                       print a new one-time sign-in link (24 h)
  domain verify --email E --domain D [--without-dns --reason R]
                                                     verify a domain by DNS, or trust it (the reason is recorded)
  import --email E PATH...                           report files and folders (.xml, .xml.gz, .zip, .json,
                                                     .eml, mbox), recursively, each with its outcome`

function required(values: Record<string, unknown>, name: string): string {
  const value = values[name]
  if (typeof value !== 'string' || value === '') throw new CliUsageError(`--${name} is required\n${USAGE}`)
  return value
}

async function readStdin(): Promise<string> {
  return (await new Response(Bun.stdin.stream()).text()).replace(/\r?\n$/, '')
}

class NotStoredError extends Error {}

function ingested(outcome: IngestOutcome): string {
  if (outcome.ok) return outcome.output
  if ('refused' in outcome) throw new CliError(outcome.refused)
  throw new NotStoredError(outcome.notStored)
}

async function run(
  argv: string[],
  config: Config,
  database: Database,
  message: IngestMessage | null,
): Promise<string> {
  const [group, action] = argv
  const domainCommands = await import('./cli/domain-commands.ts')
  if (domainCommands.handlesCommand(group, action))
    return domainCommands.runDomainCommand(argv, config, database, new Date())
  if (group === 'import')
    return (await import('./cli/import.ts')).runImport(argv.slice(1), { config, database })
  const { values } = parseOptions(
    argv.slice(group === 'migrate' || group === 'ingest' || group === 'demo' ? 1 : 2),
    {
      email: { type: 'string' },
      password: { type: 'string' },
      'password-stdin': { type: 'boolean' },
      name: { type: 'string' },
      'expires-in-days': { type: 'string' },
      token: { type: 'string' },
      id: { type: 'string' },
      recipient: { type: 'string' },
      direct: { type: 'boolean' },
      remove: { type: 'boolean' },
    },
  )
  const { createAccount, createToken, revokeToken } = await import('../domain/accounts/use-cases.ts')
  const { stores, systemRandom } = await import('./compose.ts')
  const s = stores(database)
  const now = new Date()
  const command = group === 'ingest' || group === 'demo' ? group : `${group} ${action ?? ''}`.trim()
  switch (command) {
    case 'migrate':
      return JSON.stringify({ migrated: true })
    case 'account create': {
      if (values['password-stdin'] && values.password !== undefined)
        throw new CliUsageError(`give --password or --password-stdin, not both\n${USAGE}`)
      const password = values['password-stdin'] ? await readStdin() : values.password
      const result = await createAccount(
        { accounts: s.accounts, random: systemRandom, hashPassword: (p) => Bun.password.hash(p, 'argon2id') },
        { email: required(values, 'email'), password },
      )
      if (!result.ok) throw new CliError(describe(result.failure))
      const { accountId, userId, email, ingestKey } = result.value
      // Without a password the dashboard is reached through a one-time link (docs/dashboard.md).
      const { newLoginLink } = await import('./cli/login-link-command.ts')
      const link = password === undefined ? await newLoginLink(config, database, email, now) : null
      return JSON.stringify({
        account_id: accountId,
        user_id: userId,
        email,
        report_address: `${ingestKey}@${config.ingestDomain}`,
        ...(link ? { sign_in_link: link.link, sign_in_link_expires_at: link.expiresAt } : {}),
      })
    }
    case 'token create': {
      const days = values['expires-in-days']
      if (days !== undefined && !/^\d+$/.test(days))
        throw new CliError('--expires-in-days takes a whole number')
      const result = await createToken(
        { accounts: s.accounts, tokens: s.tokens, random: systemRandom },
        {
          email: required(values, 'email'),
          name: required(values, 'name'),
          expiresInDays: days === undefined ? undefined : Number(days),
          now,
        },
      )
      if (!result.ok) throw new CliError(describe(result.failure))
      return result.value.value
    }
    case 'token revoke': {
      let input: Parameters<typeof revokeToken>[1]
      if (values.token !== undefined) input = { value: values.token, now }
      else {
        const member = await s.accounts.findMembershipByEmail(required(values, 'email'))
        if (member === null) throw new CliError('no such user')
        input = { accountId: member.accountId, tokenId: required(values, 'id'), now }
      }
      const result = await revokeToken({ tokens: s.tokens }, input)
      if (!result.ok) throw new CliError(describe(result.failure))
      return JSON.stringify({
        id: result.value.id,
        name: result.value.name,
        revoked_at: result.value.revokedAt,
      })
    }
    case 'token list': {
      const member = await s.accounts.findMembershipByEmail(required(values, 'email'))
      if (member === null) throw new CliError('no such user')
      const tokens = await s.tokens.list(member.accountId)
      return JSON.stringify(
        tokens.map((token) => ({
          id: token.id,
          name: token.name,
          hint: token.hint,
          expires_at: token.expiresAt,
          revoked_at: token.revokedAt,
          last_used_at: token.lastUsedAt,
          created_at: token.createdAt,
        })),
      )
    }
    case 'ingest':
      return ingested(
        await ingestWithDatabase(config, database, message ?? (await readMessage(config, values.recipient))),
      )
    case 'demo': {
      const { startBoss } = await import('../infrastructure/queue/pg-boss.ts')
      const { createQueues } = await import('../infrastructure/queue/catalogue.ts')
      const { demoCommand } = await import('./cli/demo.ts')
      const { demoDeps } = await import('./compose/demo.ts')
      const boss = await startBoss(database, { background: false })
      try {
        await createQueues(boss)
        const deps = demoDeps({ config, database, boss, now: () => new Date() })
        const result = await demoCommand(deps, {
          email: required(values, 'email'),
          remove: values.remove === true,
        })
        if (!result.ok) throw new CliError(describe(result.failure))
        return JSON.stringify(result.value)
      } finally {
        await boss.stop({ graceful: false })
      }
    }
    default:
      throw new CliUsageError(USAGE)
  }
}

/** The commands of USAGE, as their first one or two words. */
const COMMANDS = new Set([
  'migrate',
  'ingest',
  'demo',
  'import',
  'account create',
  'account login-link',
  'token create',
  'token revoke',
  'token list',
  'domain verify',
])

/** The command `argv` names, or null: told before DATA_DIR or the database is opened. */
function commandOf(argv: string[]): string | null {
  const [group = '', action = ''] = argv
  if (COMMANDS.has(group)) return group
  return COMMANDS.has(`${group} ${action}`) ? `${group} ${action}` : null
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2)
  // `--help` anywhere, `cli account create --help` too, is the usage (it was "Unknown option").
  if (argv.length === 0 || argv[0] === 'help' || argv.includes('--help')) {
    console.log(USAGE)
    return argv.length === 0 ? 2 : 0
  }
  if (commandOf(argv) === null) {
    const named = printable(argv.slice(0, 2).join(' ')).slice(0, 100)
    console.error(`unknown command "${named}"\n${USAGE}`)
    return 2
  }
  let database: Database | null = null
  try {
    const config = loadConfig()
    let message: IngestMessage | null = null
    if (argv[0] === 'ingest') {
      // Handed to a running service when there is one (src/cli-ingest.ts); else stored below.
      const { values } = parseOptions(argv.slice(1), {
        recipient: { type: 'string' },
        direct: { type: 'boolean' },
      })
      message = await readMessage(config, values.recipient)
      const handed = values.direct ? null : await ingestThroughService(config, message)
      if (handed !== null) {
        console.log(ingested(handed))
        return 0
      }
    }
    const { openDatabase } = await import('./open-database.ts')
    const { migrate } = await import('../infrastructure/db/migrate.ts')
    database = await openDatabase(config, { serveSocket: false, poolSize: 2 })
    // Through a running service's socket the database is already migrated (the service migrates
    // at start), and one connection through the multiplexer is less to go wrong.
    if (!(database.kind === 'postgres' && database.socketPath)) await migrate(database)
    console.log(await run(argv, config, database, message))
    return 0
  } catch (error) {
    // infrastructure/db/embedded.ts's DataDirBusyError, told by name (the module is loaded lazily).
    const busy = error instanceof Error && error.name === 'DataDirBusyError'
    if (error instanceof CliError || error instanceof ConfigError || busy) {
      console.error(error.message)
      // Another CLI holds DATA_DIR for a moment (no service runs), or the configuration is wrong
      // until the operator fixes it: the mail server keeps the message and retries later.
      if ((busy || error instanceof ConfigError) && argv[0] === 'ingest') return EX_TEMPFAIL
      return error instanceof CliUsageError ? 2 : 1
    }
    if (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS')) {
      console.error(`${error.message}\n${USAGE}`)
      return 2
    }
    // One line, and for a failed statement the database's reason, not the statement and its
    // parameters (a mail's bytes; domain/shared/logger.ts errorLine).
    console.error(`error: ${errorLine(error)}`)
    // A message the pipe could not store (as opposed to one refused) is the mail server's to retry.
    return argv[0] === 'ingest' ? EX_TEMPFAIL : 1
  } finally {
    await database?.close()
  }
}

process.exit(await main())
