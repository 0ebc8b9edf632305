import { sql } from 'drizzle-orm'
import { getDomain } from 'tldts'
import { normalizeDomainName } from '../../domain/domains/domain-name.ts'
import type { DomainMatch } from '../../domain/ingest/process-message.ts'
import { type Db, rowsOf } from '../db/database.ts'

/**
 * Which of the account's domains a report belongs to (docs/ingestion.md: the policy domain decides): the
 * policy domain itself, else its organizational domain. Reports act only on verified domains (§4):
 * a report for an unverified one is quarantined with the reason and the domain, and verifying the
 * domain queues it again (infrastructure/repositories/pg-domain-verification.ts).
 */
export async function resolveReportDomain(
  db: Db,
  accountId: string,
  policyDomain: string,
): Promise<DomainMatch> {
  // Domains are stored as A-labels (docs/api.md); a reporter may write the U-label (`ß.de`) or
  // full-width letters, which name the same domain. A name that is no host name is looked up as written.
  const written = policyDomain.trim().toLowerCase().replace(/\.$/, '')
  const normalized = /^[\x21-\x7e]*$/.test(written) ? null : normalizeDomainName(written)
  const name = normalized?.ok ? normalized.name : written
  const org = getDomain(name, { allowPrivateDomains: true }) ?? name
  const rows = rowsOf<{ id: string; name: string; verified: boolean }>(
    await db.execute(sql`select id, name, verified_at is not null as verified from domains
      where account_id = ${accountId} and name in (${name}, ${org})
      order by (name = ${name}) desc limit 1`),
  )
  const row = rows[0]
  if (row === undefined) {
    return {
      ok: false,
      reason: {
        code: 'domain_not_in_account',
        message: `The report is for ${name}, which is not a domain of this account.`,
      },
    }
  }
  if (!row.verified) {
    return {
      ok: false,
      reason: {
        code: 'domain_not_verified',
        // The migration 0012 read the domain back from this text: keep its beginning as it is.
        message: `The report is for ${row.name}, which is not verified yet; it is processed as soon as the domain is verified.`,
        domain: row.name,
      },
    }
  }
  return { ok: true, domainId: Number(row.id), name: row.name }
}
