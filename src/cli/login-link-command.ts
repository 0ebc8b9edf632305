import { createLoginLink, loginLinkPath } from '../../domain/accounts/login-link.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import { stores, systemRandom } from '../compose.ts'
import type { Config } from '../config.ts'
import { CliError, describe } from './errors.ts'

// `account login-link --email E`, and the link `account create` prints when no password is given:
// a one-time sign-in link (24 hours) under PUBLIC_URL (domain/accounts/login-link.ts).

export async function newLoginLink(
  config: Config,
  database: Database,
  email: string,
  now: Date,
): Promise<{ link: string; expiresAt: Date; hasPassword: boolean }> {
  const { credentials, links } = stores(database)
  const result = await createLoginLink({ credentials, links, random: systemRandom }, { email, now })
  if (!result.ok) throw new CliError(describe(result.failure))
  const { token, expiresAt, hasPassword } = result.value
  return { link: `${config.publicUrl}${loginLinkPath(token)}`, expiresAt, hasPassword }
}
