import { markDomainVerified, verifyDomain } from '../../domain/domains/verification.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import { createQueues } from '../../infrastructure/queue/catalogue.ts'
import { startBoss } from '../../infrastructure/queue/pg-boss.ts'
import { resolvers } from '../compose/dns.ts'
import { verificationStore } from '../compose/stores.ts'
import { stores } from '../compose.ts'
import type { Config } from '../config.ts'
import { CliError, CliUsageError, describe } from './errors.ts'
import { newLoginLink } from './login-link-command.ts'
import { parseOptions } from './options.ts'

// The operator's commands for domains and sign-in links (kept apart from src/cli.ts):
//   domain verify --email E --domain D                        the DNS proofs, as POST /domains/{name}/verify
//   domain verify --email E --domain D --without-dns --reason R   trust without DNS (self-hosted setups)
//   account login-link --email E                              a new one-time sign-in link
// A verification re-queues the domain's reports that waited for it, so the command runs with the
// job queue (docs/ingestion.md).

export const DOMAIN_USAGE = `  domain verify --email E --domain D [--without-dns --reason R]
                                                     verify a domain by its DNS proofs (TXT record, or a
                                                     DMARC rua/ruf naming the report address); with
                                                     --without-dns, trust it (the reason is recorded)
  account login-link --email E                       prints a new one-time sign-in link (24 hours)`

export function handlesCommand(group: string | undefined, action: string | undefined): boolean {
  return (group === 'domain' && action === 'verify') || (group === 'account' && action === 'login-link')
}

function required(values: Record<string, unknown>, name: string): string {
  const value = values[name]
  if (typeof value !== 'string' || value.trim() === '') throw new CliUsageError(`--${name} is required`)
  return value
}

export async function runDomainCommand(
  argv: string[],
  config: Config,
  database: Database,
  now: Date,
): Promise<string> {
  const { values } = parseOptions(argv.slice(2), {
    email: { type: 'string' },
    domain: { type: 'string' },
    'without-dns': { type: 'boolean' },
    reason: { type: 'string' },
  })
  const email = required(values, 'email')
  if (argv[0] === 'account') return (await newLoginLink(config, database, email, now)).link

  const name = required(values, 'domain')
  const withoutDns = values['without-dns'] === true
  if (!withoutDns && values.reason !== undefined) throw new CliUsageError('--reason goes with --without-dns')
  const reason = withoutDns ? required(values, 'reason') : null
  const s = stores(database)
  const member = await s.accounts.findMembershipByEmail(email)
  if (member === null) throw new CliError('no such user')
  const boss = await startBoss(database, { background: false })
  try {
    await createQueues(boss)
    const deps = {
      domains: s.domains,
      // On this command's queue: a verification re-queues the reports that waited for it.
      verifications: verificationStore(database, boss),
      dns: resolvers(config, () => now).verificationDns,
      reportAddress: async (accountId: string) =>
        `${(await s.accounts.ingestKeyOf(accountId)) ?? 'unknown'}@${config.ingestDomain}`,
    }
    const input = { accountId: member.accountId, name, now }
    const result = withoutDns
      ? await markDomainVerified(deps, { ...input, proof: 'operator', reason })
      : await verifyDomain(deps, input)
    if (!result.ok)
      throw new CliError(
        result.failure.code === 'domain_not_found'
          ? 'no such domain in the account'
          : describe(result.failure),
      )
    const { domain, check } = result.value
    if (!check.verified) throw new CliError(`not verified: ${check.message}`)
    return JSON.stringify({
      domain: domain.name,
      verified: true,
      proof: check.proof,
      verified_at: domain.verifiedAt,
      ...(withoutDns ? { reason } : {}),
      requeued: check.requeued,
      message: check.message,
    })
  } finally {
    await boss.stop({ graceful: false })
  }
}
