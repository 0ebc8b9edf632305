import { encodeBase32LowerCaseNoPadding } from '@oslojs/encoding'
import { showsSomething } from '../shared/control-characters.ts'
import type { Page, PageRequest } from '../shared/pagination.ts'
import type { RandomBytes } from '../shared/random.ts'
import { fail, invalid, ok, type Result } from '../shared/result.ts'

// Embed keys are public by design (they sit in a page's source). What guards them is the list of
// origins allowed to call the scanner from a browser, and the per-IP limit.

export interface EmbedKey {
  id: string
  key: string
  name: string
  allowedOrigins: string[]
  createdAt: Date
}

export interface EmbedKeyStore {
  list(accountId: string): Promise<EmbedKey[]>
  /** One page of the account's live keys, oldest first. */
  page(accountId: string, page: PageRequest): Promise<Page<EmbedKey>>
  insert(accountId: string, key: Omit<EmbedKey, 'id' | 'createdAt'>): Promise<EmbedKey>
  /** Scoped by account; true when a live key was revoked. */
  revoke(accountId: string, id: string, at: Date): Promise<boolean>
  /** The live key with this public value, across accounts (the public scan endpoint). */
  findLive(key: string): Promise<(EmbedKey & { accountId: string }) | null>
}

export const MAX_ORIGINS = 20

/** An origin is scheme, host and optional port, exactly as a browser sends it in `Origin`. */
export function normalizeOrigin(input: string): string | null {
  try {
    const url = new URL(input.trim())
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return null
    // No browser sends port 0, or a host with `*`: origins are matched exactly, and a wildcard
    // would only look as if it covered the subdomains.
    if (url.port === '0' || url.hostname.includes('*')) return null
    if (
      url.username ||
      url.password ||
      url.search ||
      url.hash ||
      (url.pathname !== '/' && url.pathname !== '')
    )
      return null
    return url.origin
  } catch {
    return null
  }
}

export function originAllowed(key: Pick<EmbedKey, 'allowedOrigins'>, origin: string | null): boolean {
  return origin !== null && key.allowedOrigins.includes(origin)
}

export async function createEmbedKey(
  deps: { embedKeys: EmbedKeyStore; random: RandomBytes },
  input: { accountId: string; name: string; allowedOrigins: string[] },
): Promise<Result<EmbedKey>> {
  const name = input.name.trim()
  if (!showsSomething(name) || name.length > 100)
    return invalid('name', 'An embed key needs a name of 1-100 characters.')
  if (input.allowedOrigins.length === 0 || input.allowedOrigins.length > MAX_ORIGINS) {
    return invalid('allowed_origins', `Give 1-${MAX_ORIGINS} origins such as https://www.example.com.`)
  }
  const origins: string[] = []
  for (const raw of input.allowedOrigins) {
    const origin = normalizeOrigin(raw)
    if (origin === null) {
      return invalid(
        'allowed_origins',
        `"${raw}" is not an origin (scheme://host[:port], no path or wildcard), e.g. https://www.example.com.`,
      )
    }
    if (!origins.includes(origin)) origins.push(origin)
  }
  const key = `ek_${encodeBase32LowerCaseNoPadding(deps.random(15))}`
  return ok(await deps.embedKeys.insert(input.accountId, { key, name, allowedOrigins: origins }))
}

export async function revokeEmbedKey(
  deps: { embedKeys: EmbedKeyStore },
  input: { accountId: string; id: string; now: Date },
): Promise<Result<true>> {
  const revoked = await deps.embedKeys.revoke(input.accountId, input.id, input.now)
  return revoked ? ok(true) : fail({ code: 'not_found', resource: 'embed key' })
}
