import { parseArgs } from 'node:util'
import { createAccount, createToken, revokeToken } from '../domain/accounts/use-cases.ts'
import { recipientFromHeaders } from '../domain/ingest/routing.ts'
import type { Database } from '../infrastructure/db/database.ts'
import { DataDirBusyError } from '../infrastructure/db/embedded.ts'
import { migrate } from '../infrastructure/db/migrate.ts'
import { parseHeaders } from '../infrastructure/mail/header-recipient.ts'
import { type Spool, spoolMessage } from '../infrastructure/mail/message-spool.ts'
import { createQueues } from '../infrastructure/queue/catalogue.ts'
import { startBoss } from '../infrastructure/queue/pg-boss.ts'
import { demoCommand, demoDeps } from './cli/demo.ts'
import { DOMAIN_USAGE, handlesCommand, runDomainCommand } from './cli/domain-commands.ts'
import { CliError, describe } from './cli/errors.ts'
import { IMPORT_USAGE, ImportUsageError, runImport } from './cli/import.ts'
import { newLoginLink } from './cli/login-link-command.ts'
import { intake, stores, systemRandom } from './compose.ts'
import { type Config, ConfigError, loadConfig } from './config.ts'
import { openDatabase } from './open-database.ts'

// `bun run cli <command>`. Results go to stdout (JSON, or a bare token value); problems go to
// stderr as one line, with a non-zero exit code.

const USAGE = `usage: bun run cli <command>
  migrate                                            apply database migrations
  account create --email E [--password P | --password-stdin]
                                                     create an account and its owner; prints JSON
                                                     (without a password: a one-time sign-in link)
  token create --email E --name N [--expires-in-days D]
                                                     prints the new API token alone on stdout
  token revoke (--token VALUE | --id ID --email E)   revoke a token
  token list --email E                               list the account's tokens as JSON (no secrets)
  ingest [--recipient ADDRESS] < message.eml         accept one raw report email (MTA pipe transport);
                                                     recipient defaults to Delivered-To / X-Original-To / To
  demo --email E [--remove]                          add the demo domain with 30 days of generated reports
                                                     (sent through the intake), or remove it
${DOMAIN_USAGE}
${IMPORT_USAGE}`

function required(values: Record<string, unknown>, name: string): string {
  const value = values[name]
  if (typeof value !== 'string' || value === '') throw new CliError(`--${name} is required\n${USAGE}`)
  return value
}

async function readStdin(): Promise<string> {
  return (await new Response(Bun.stdin.stream()).text()).replace(/\r?\n$/, '')
}

async function run(argv: string[], config: Config, database: Database): Promise<string> {
  const [group, action] = argv
  if (handlesCommand(group, action)) return runDomainCommand(argv, config, database, new Date())
  if (group === 'import') return runImport(argv.slice(1), { config, database })
  const { values } = parseArgs({
    args: argv.slice(group === 'migrate' || group === 'ingest' || group === 'demo' ? 1 : 2),
    options: {
      email: { type: 'string' },
      password: { type: 'string' },
      'password-stdin': { type: 'boolean' },
      name: { type: 'string' },
      'expires-in-days': { type: 'string' },
      token: { type: 'string' },
      id: { type: 'string' },
      recipient: { type: 'string' },
      remove: { type: 'boolean' },
    },
    strict: true,
  })
  const s = stores(database)
  const now = new Date()
  const command = group === 'ingest' || group === 'demo' ? group : `${group} ${action ?? ''}`.trim()
  switch (command) {
    case 'migrate':
      return JSON.stringify({ migrated: true })
    case 'account create': {
      const password = values['password-stdin'] ? await readStdin() : values.password
      const result = await createAccount(
        { accounts: s.accounts, random: systemRandom, hashPassword: (p) => Bun.password.hash(p, 'argon2id') },
        { email: required(values, 'email'), password },
      )
      if (!result.ok) throw new CliError(describe(result.failure))
      const { accountId, userId, email, ingestKey } = result.value
      // Without a password the dashboard is reached through a one-time link (docs/dashboard.md).
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
    case 'ingest': {
      // Spooled like the HTTP and SMTP intake: a large message is never held whole.
      const spooled = await spoolMessage(Bun.stdin.stream() as unknown as AsyncIterable<Uint8Array>, {
        maxBytes: config.ingestMaxMessageBytes,
      })
      if (!spooled.ok)
        throw new CliError(`not accepted: the message is larger than ${config.ingestMaxMessageBytes} bytes`)
      const raw = spooled.spool
      const recipient =
        values.recipient ??
        recipientFromHeaders(
          Object.fromEntries(parseHeaders(await leadingBytes(raw))),
          config.ingestDomain,
        ) ??
        null
      const boss = await startBoss(database, { background: false })
      try {
        await createQueues(boss)
        const { accept } = intake({ config, database, boss, now: () => now })
        const result = await accept({ raw, recipient, source: 'cli' })
        if (!result.ok) {
          const failure = result.failure
          if (failure.code === 'not_found')
            throw new CliError(
              `not accepted: ${recipient ?? 'no recipient'} is not a report address of this service`,
            )
          if (failure.code === 'payload_too_large')
            throw new CliError(`not accepted: the message is larger than ${failure.limit} bytes`)
          throw new CliError(`not accepted: ${describe(failure)}`)
        }
        return JSON.stringify({ id: result.value.id, status: 'accepted' })
      } finally {
        await boss.stop({ graceful: false })
        await raw.discard()
      }
    }
    case 'demo': {
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
      throw new CliError(USAGE)
  }
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2)
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === 'help') {
    console.log(USAGE)
    return argv.length === 0 ? 2 : 0
  }
  let database: Database | null = null
  try {
    const config = loadConfig()
    database = await openDatabase(config, { serveSocket: false, poolSize: 2 })
    // Through a running service's socket the database is already migrated (the service migrates
    // at start), and one connection through the multiplexer is less to go wrong.
    if (!(database.kind === 'postgres' && database.socketPath)) await migrate(database)
    console.log(await run(argv, config, database))
    return 0
  } catch (error) {
    if (
      error instanceof CliError ||
      error instanceof ImportUsageError ||
      error instanceof ConfigError ||
      error instanceof DataDirBusyError
    ) {
      console.error(error.message)
      return error instanceof CliError && error.message.startsWith('usage') ? 2 : 1
    }
    if (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS')) {
      console.error(`${error.message}\n${USAGE}`)
      return 2
    }
    console.error(`error: ${error instanceof Error ? error.message : String(error)}`)
    return 1
  } finally {
    await database?.close()
  }
}

process.exit(await main())

/** The start of a spooled message, enough for its header section. */
async function leadingBytes(spool: Spool, limit = 256 * 1024): Promise<Uint8Array> {
  const pieces: Uint8Array[] = []
  let total = 0
  for await (const piece of spool.pieces()) {
    pieces.push(piece)
    total += piece.byteLength
    if (total >= limit) break
  }
  return Buffer.concat(pieces).subarray(0, limit)
}
