import type { Failure } from '../../domain/shared/result.ts'

// What every CLI command shares: a problem the user caused ends the command with its message on
// stderr and a non-zero exit code (src/cli.ts); anything else is unexpected.

export class CliError extends Error {}

/** A command given wrong: a missing option, an unknown command. Exit code 2 (src/cli.ts). */
export class CliUsageError extends CliError {}

/** What to do when no account has the e-mail given (`who`: how to name it). */
export const noAccountWith = (who: string) =>
  `${who}: check --email, or create one with \`bun run cli account create --email …\``

export function describe(failure: Failure): string {
  if (failure.code === 'validation_failed') return Object.values(failure.errors).flat().join(' ')
  if (failure.code === 'not_found' && (failure.resource === 'user' || failure.resource === 'account'))
    return noAccountWith(`no ${failure.resource} with that e-mail`)
  if (failure.code === 'not_found') return `no such ${failure.resource}`
  return failure.code
}
