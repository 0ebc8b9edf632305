import { createLoginLink, loginLinkPath } from '../../domain/accounts/login-link.ts'
import type { Database } from '../../infrastructure/db/database.ts'
import { pgCredentialStore } from '../../infrastructure/repositories/pg-credential-store.ts'
import { pgLoginLinkStore } from '../../infrastructure/repositories/pg-login-link-store.ts'
import { systemRandom } from '../compose.ts'
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
  const result = await createLoginLink(
    {
      credentials: pgCredentialStore(database.db),
      links: pgLoginLinkStore(database.db),
      random: systemRandom,
    },
    { email, now },
  )
  if (!result.ok) throw new CliError(describe(result.failure))
  const { token, expiresAt, hasPassword } = result.value
  return { link: `${config.publicUrl}${loginLinkPath(token)}`, expiresAt, hasPassword }
}
