import { type ParseArgsOptionsConfig, parseArgs } from 'node:util'
import { CliUsageError } from './errors.ts'

/**
 * The CLI's options, read as Node's `parseArgs` reads them (strict: an unknown option is a usage
 * error), except that an option given twice is refused. `parseArgs` keeps the last value, so
 * `--email a@x --email b@x` acted on b@x without a word, and `--domain` twice verified the second.
 */
export function parseOptions<T extends ParseArgsOptionsConfig>(
  args: string[],
  options: T,
  allowPositionals = false,
) {
  const parsed = parseArgs({ args, options, allowPositionals, strict: true, tokens: true })
  const seen = new Set<string>()
  for (const token of parsed.tokens) {
    if (token.kind !== 'option') continue
    if (seen.has(token.name)) throw new CliUsageError(`--${token.name} is given more than once`)
    seen.add(token.name)
  }
  return { values: parsed.values, positionals: parsed.positionals }
}
