import { checkDkimSelectors, selectorsToCheck } from '../dkim/selectors.ts'
import { discoverDmarc } from '../dmarc/discovery.ts'
import { checkReportAuthorization } from '../dmarc/report-authorization.ts'
import type { DnsResolver } from '../dns/ports.ts'
import { lookupBimi } from '../mail/bimi.ts'
import { assessMtaStsPolicy, lookupMtaStsRecord } from '../mail/mta-sts.ts'
import { lookupTlsRpt } from '../mail/tls-rpt.ts'
import { analyzeSpf } from '../spf/analysis.ts'
import type { MtaStsFindings, MxFindings, PostureFindings } from './posture.ts'

export type PolicyFetch = { status: 'ok'; text: string } | { status: 'unavailable'; reason: string }

export interface CollectDeps {
  dns: DnsResolver
  /** Fetches `https://mta-sts.<domain>/.well-known/mta-sts.txt` (RFC 8461 §3.3); I/O, so a port. */
  fetchMtaStsPolicy: (domain: string) => Promise<PolicyFetch>
}

export interface CollectInput {
  domain: string
  configuredSelectors: readonly string[]
  learnedSelectors: readonly string[]
  now: Date
}

// A selector nobody would publish: if it resolves, the zone answers every selector (a wildcard
// under _domainkey) and "found" keys at guessed selectors mean nothing.
const WILDCARD_PROBE = 'dmarcwatch-wildcard-probe-7f3c'

async function lookupMx(dns: DnsResolver, domain: string): Promise<MxFindings> {
  const answer = await dns.resolve(domain, 'MX')
  if (answer.status === 'timeout' || answer.status === 'error') return { status: 'temperror', hosts: [] }
  if (answer.status !== 'ok') return { status: 'none', hosts: [] }
  const hosts = answer.records
    .flatMap((r) =>
      r.type === 'MX' ? [{ preference: r.preference, exchange: r.exchange.toLowerCase() }] : [],
    )
    .sort((a, b) => a.preference - b.preference || a.exchange.localeCompare(b.exchange))
  // RFC 7505: a single MX of "." says the domain accepts no mail.
  if (hosts.length === 1 && (hosts[0]!.exchange === '.' || hosts[0]!.exchange === ''))
    return { status: 'null_mx', hosts }
  return { status: 'ok', hosts }
}

async function lookupMtaSts(
  deps: CollectDeps,
  domain: string,
  mx: Promise<MxFindings>,
): Promise<MtaStsFindings> {
  const lookup = await lookupMtaStsRecord(deps, domain)
  if (lookup.status !== 'found') return { lookup, policy: null }
  const fetched = await deps.fetchMtaStsPolicy(domain)
  if (fetched.status === 'unavailable') return { lookup, policy: fetched }
  const hosts = (await mx).hosts.map((h) => h.exchange)
  const parsed = assessMtaStsPolicy({ policyText: fetched.text, mxHosts: hosts })
  return {
    lookup,
    policy: { status: 'ok', mode: parsed.ok ? parsed.policy.mode : null, findings: parsed.findings },
  }
}

async function dnssecFlag(dns: DnsResolver, domain: string): Promise<boolean | null> {
  const answer = await dns.resolve(domain, 'NS')
  return answer.status === 'ok' ? answer.authenticated : null
}

/** Runs every DNS read of a posture check, independent ones concurrently. */
export async function collectFindings(deps: CollectDeps, input: CollectInput): Promise<PostureFindings> {
  const { dns } = deps
  const domain = input.domain
  const mx = lookupMx(dns, domain)
  const dmarcPromise = discoverDmarc({ dns }, domain)
  const candidates = selectorsToCheck(input.configuredSelectors, input.learnedSelectors)
  const [dmarc, spf, dkim, wildcard, mxFindings, mtaSts, tlsRpt, dnssec] = await Promise.all([
    dmarcPromise,
    analyzeSpf({ dns }, { domain }),
    checkDkimSelectors({ dns }, domain, candidates),
    dns.resolve(`${WILDCARD_PROBE}._domainkey.${domain}`, 'TXT').then((a) => a.status === 'ok'),
    mx,
    lookupMtaSts(deps, domain, mx),
    lookupTlsRpt({ dns }, domain),
    dnssecFlag(dns, domain),
  ])
  const [reportAuthorization, bimi] = await Promise.all([
    dmarc.record !== null && dmarc.policyDomain !== null
      ? checkReportAuthorization(
          { dns },
          {
            policyDomain: dmarc.policyDomain,
            organizationalDomain: dmarc.organizationalDomain,
            record: dmarc.record,
          },
        )
      : Promise.resolve(null),
    mxFindings.status === 'null_mx'
      ? Promise.resolve(null)
      : lookupBimi({ dns }, { domain, organizationalDomain: dmarc.organizationalDomain }),
  ])
  return {
    domain,
    checkedAt: input.now.toISOString(),
    dmarc,
    reportAuthorization,
    spf,
    dkim: { ...dkim, wildcard },
    mx: mxFindings,
    mtaSts,
    tlsRpt,
    bimi,
    dnssec,
  }
}
