import { hostDomainName } from '../domain/domains/domain-name.ts'
import type { LogLevel } from '../domain/shared/logger.ts'
import { parseSecretKey } from '../infrastructure/crypto/secret-box.ts'
import { type DnsServer, parseDnsServers } from '../infrastructure/dns/dns-packet-resolver.ts'
import { parseImapUrl } from '../infrastructure/mail/imap-url.ts'
import { type OAuthProviderSettings, parseOAuthSettings } from '../infrastructure/oauth/oauth-settings.ts'

// Configuration from the environment, validated once at start (README.md "Configuration").
// An empty variable counts as unset, so `DATABASE_URL=` runs on the embedded database.

export type Role = 'all' | 'api' | 'worker'

export interface Config {
  port: number
  host: string
  databaseUrl: string | null
  dataDir: string
  publicUrl: string
  logLevel: LogLevel
  role: Role
  /** Number of trusted reverse-proxy hops in front of the service (0: use the socket address). */
  trustProxy: number
  ingestDomain: string
  /** Lets the operator's mail server submit reports for every account over HTTP (Bearer). */
  ingestSecret: string | null
  rateLimits: {
    apiPerMinute: number
    publicPerMinute: number
    dnsWritesPerMinute: number
    webhooksPerHour: number
    /** Login attempts per account email (the per-IP bound is the public limit). */
    loginPerMinute: number
  }
  /** Bytes; JSON request bodies (docs/api.md "Authentication and limits": 1 MB). */
  maxJsonBodyBytes: number
  /** Bytes; raw intake messages (docs/ingestion.md: 64 MB). */
  ingestMaxMessageBytes: number
  /** Bytes; a decompressed report (docs/ingestion.md: 1 GB). */
  ingestMaxReportBytes: number
  /** Bytes; the sizes of the messages one worker process works on at once (docs/ingestion.md). */
  ingestWorkerMaxBytes: number
  /** Messages one worker process works on at once, whatever their size. */
  ingestWorkerConcurrency: number
  /** Ms of CPU a report's stream runs before it lets the event loop turn; 0: never (issue #20). */
  workerSliceMs: number
  /** Bytes; messages this large have their aggregate reports parsed on a thread of their own; 0: never. */
  ingestParseThreadBytes: number
  /** Connections of the worker's own pool when the API runs in the same process (ROLE=all, PostgreSQL); 0 shares the API's. */
  workerDbPool: number
  /** Bytes; ROLE=all on PostgreSQL digests messages this large in a process of their own; 0: never. */
  ingestProcessBytes: number
  /** The CPU priority (nice 0-19) of those processes: below the API's, which they share cores with. */
  ingestProcessNice: number
  /** WORKER_NICE: the CPU priority a ROLE=worker process gives itself (nice 0-19; 0 leaves it). */
  workerNice: number
  /** Reverse-DNS enrichment: source IPs looked up per run (every 5 minutes), and at once. */
  enrichPtr: { perRun: number; concurrency: number }
  shutdownTimeoutMs: number
  /** Recursive resolvers for the posture checks; null: the system's (/etc/resolv.conf). */
  dnsServers: DnsServer[] | null
  dnsTimeoutMs: number
  /** IMAP mailboxes polled for reports (imap:// or imaps:// URLs). */
  imapMailboxes: string[]
  imapArchiveFolder: string
  imapRejectedFolder: string
  /** The SMTP/LMTP listener (null: off). */
  smtp: { port: number; host: string; lmtp: boolean } | null
  /** Outbound HTTP (webhooks, MTA-STS policies) may reach private addresses: for tests and closed networks. */
  webhookAllowPrivate: boolean
  /** SECRET_KEY: 32 bytes (hex or base64) sealing stored secrets; unset: a key file in DATA_DIR. */
  secretKey: Uint8Array | null
  /** METRICS_TOKEN: Bearer token for GET /metrics (null: no /metrics, 404). */
  metricsToken: string | null
  /** METRICS_PORT: where a ROLE=worker process serves /metrics, /healthz, /readyz (null: nowhere). */
  metricsPort: number | null
  /**
   * The zone the service hosts managed SPF (and DMARC) records under, and its built-in
   * authoritative DNS responder (null port: not started; the zone can still be published through a
   * connected DNS provider).
   */
  spf: {
    zone: string
    dnsPort: number | null
    dnsHost: string
    nameservers: string[]
    hostmaster: string
    /** Hours between re-planning flattened records (provider ranges change). */
    reflattenHours: number
  }
  /**
   * Outgoing mail (password reset links, alert emails, digests). No SMTP URL: mails are written to
   * the log instead. `alertIntervalSeconds`: at most one alert email per account per interval
   * (ALERT_MAIL_INTERVAL_SECONDS, default 300; docs/notifications.md "Mail").
   */
  mail: { smtpUrl: string | null; from: string; alertIntervalSeconds: number }
  /**
   * OAuth / OpenID Connect login (OAUTH_GOOGLE_*, OAUTH_MICROSOFT_*, OAUTH_LINKEDIN_*, OAUTH_OIDC_*;
   * docs/oauth.md): the providers whose client id and secret are set, in login-page order.
   */
  oauth: { providers: OAuthProviderSettings[] }
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    this.name = 'ConfigError'
  }
}

type Env = Record<string, string | undefined>

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = []
  const get = (name: string): string | undefined => {
    const value = env[name]?.trim()
    return value === undefined || value === '' ? undefined : value
  }
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = get(name)
    if (raw === undefined) return fallback
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`)
      return fallback
    }
    return Number(raw)
  }
  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const raw = get(name)
    if (raw === undefined) return fallback
    if (!(allowed as readonly string[]).includes(raw)) {
      problems.push(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`)
      return fallback
    }
    return raw as T
  }

  const port = int('PORT', 3000, 0, 65535)
  const host = get('HOST') ?? '0.0.0.0'
  const databaseUrl = get('DATABASE_URL') ?? null
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push(
      'DATABASE_URL must be a postgres:// or postgresql:// URL (leave it unset for the embedded database)',
    )
  }
  const publicUrl = (get('PUBLIC_URL') ?? `http://localhost:${port}`).replace(/\/+$/, '')
  const publicProblem = publicUrlProblem(publicUrl)
  if (publicProblem !== null) problems.push(`PUBLIC_URL ${publicProblem} (got "${publicUrl}")`)
  // The report addresses' domain: INGEST_DOMAIN as given, or PUBLIC_URL's host when that is a name
  // (an address such as 127.0.0.1 names no mail domain: localhost then).
  const ingestDomainSetting = get('INGEST_DOMAIN')
  const ingestDomainGiven = ingestDomainSetting === undefined ? null : hostDomainName(ingestDomainSetting)
  const ingestDomain =
    ingestDomainSetting === undefined
      ? (hostDomainName(hostOf(publicUrl) ?? '') ?? 'localhost')
      : (ingestDomainGiven ?? ingestDomainSetting.toLowerCase())
  if (ingestDomainSetting !== undefined && ingestDomainGiven === null)
    problems.push(
      `INGEST_DOMAIN must be a domain name such as reports.example.com, without scheme, port or path (got "${ingestDomainSetting}")`,
    )

  const config: Config = {
    port,
    host,
    databaseUrl,
    dataDir: get('DATA_DIR') ?? './data',
    publicUrl,
    logLevel: oneOf('LOG_LEVEL', ['debug', 'info', 'warn', 'error', 'silent'] as const, 'info'),
    role: oneOf('ROLE', ['all', 'api', 'worker'] as const, 'all'),
    trustProxy: int('TRUST_PROXY', 0, 0, 10),
    ingestDomain,
    ingestSecret: get('INGEST_SECRET') ?? null,
    rateLimits: {
      apiPerMinute: int('RATE_LIMIT_API_PER_MINUTE', 60, 1, 10_000_000),
      publicPerMinute: int('RATE_LIMIT_PUBLIC_PER_MINUTE', 100, 1, 10_000_000),
      dnsWritesPerMinute: int('RATE_LIMIT_DNS_WRITES_PER_MINUTE', 10, 1, 10_000_000),
      webhooksPerHour: int('RATE_LIMIT_WEBHOOKS_PER_HOUR', 1000, 1, 10_000_000),
      loginPerMinute: int('RATE_LIMIT_LOGIN_PER_MINUTE', 5, 1, 10_000_000),
    },
    maxJsonBodyBytes: int('MAX_JSON_BODY_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    ingestMaxMessageBytes: int('INGEST_MAX_MESSAGE_BYTES', 64 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    ingestMaxReportBytes: int('INGEST_MAX_REPORT_BYTES', 1024 * 1024 * 1024, 1024, 8 * 1024 * 1024 * 1024),
    ingestWorkerMaxBytes: int(
      'INGEST_WORKER_MAX_BYTES',
      128 * 1024 * 1024,
      1024 * 1024,
      64 * 1024 * 1024 * 1024,
    ),
    ingestWorkerConcurrency: int('INGEST_WORKER_CONCURRENCY', 8, 1, 64),
    workerSliceMs: int('WORKER_SLICE_MS', 5, 0, 1000),
    ingestParseThreadBytes: int('INGEST_PARSE_THREAD_BYTES', 0, 0, 64 * 1024 * 1024 * 1024),
    workerDbPool: int('WORKER_DB_POOL', 4, 0, 100),
    workerNice: int('WORKER_NICE', 0, 0, 19),
    ingestProcessBytes: int('INGEST_PROCESS_BYTES', 1024 * 1024, 0, 64 * 1024 * 1024 * 1024),
    ingestProcessNice: int('INGEST_PROCESS_NICE', 10, 0, 19),
    enrichPtr: {
      perRun: int('ENRICH_PTR_PER_RUN', 1000, 1, 100_000),
      concurrency: int('ENRICH_PTR_CONCURRENCY', 4, 1, 64),
    },
    shutdownTimeoutMs: int('SHUTDOWN_TIMEOUT_MS', 10_000, 100, 120_000),
    dnsServers: null,
    dnsTimeoutMs: int('DNS_TIMEOUT_MS', 2000, 50, 30_000),
    imapMailboxes: (get('IMAP_MAILBOXES') ?? '').split(/\s+/).filter((url) => url !== ''),
    imapArchiveFolder: get('IMAP_ARCHIVE_FOLDER') ?? 'Archive',
    imapRejectedFolder: get('IMAP_REJECTED_FOLDER') ?? 'Rejected',
    smtp:
      get('SMTP_PORT') === undefined
        ? null
        : {
            port: int('SMTP_PORT', 2525, 0, 65535),
            host: get('SMTP_HOST') ?? '0.0.0.0',
            lmtp: oneOf('SMTP_LMTP', ['0', '1'] as const, '0') === '1',
          },
    webhookAllowPrivate:
      oneOf('WEBHOOK_ALLOW_PRIVATE', ['0', '1', 'true', 'false'] as const, '0') === '1' ||
      get('WEBHOOK_ALLOW_PRIVATE') === 'true',
    secretKey: null,
    metricsToken: get('METRICS_TOKEN') ?? null,
    metricsPort: get('METRICS_PORT') === undefined ? null : int('METRICS_PORT', 9091, 0, 65535),
    spf: {
      zone: (get('SPF_ZONE') ?? `spf.${ingestDomain}`).toLowerCase().replace(/\.$/, ''),
      dnsPort: get('SPF_DNS_PORT') === undefined ? null : int('SPF_DNS_PORT', 5353, 0, 65535),
      dnsHost: get('SPF_DNS_HOST') ?? '0.0.0.0',
      nameservers: (get('SPF_NAMESERVERS') ?? `ns1.${ingestDomain}`)
        .split(/[\s,]+/)
        .filter((name) => name !== ''),
      hostmaster: get('SPF_HOSTMASTER') ?? `hostmaster.${ingestDomain}`,
      reflattenHours: int('SPF_REFLATTEN_HOURS', 6, 1, 24 * 7),
    },
    mail: {
      smtpUrl: get('MAIL_SMTP_URL') ?? null,
      from: get('MAIL_FROM') ?? `dmarcwatch <noreply@${ingestDomain}>`,
      alertIntervalSeconds: int('ALERT_MAIL_INTERVAL_SECONDS', 300, 1, 86_400),
    },
    oauth: { providers: parseOAuthSettings(get, problems) },
  }
  const secretKey = get('SECRET_KEY')
  if (secretKey !== undefined) {
    config.secretKey = parseSecretKey(secretKey)
    if (config.secretKey === null)
      problems.push('SECRET_KEY must be 32 bytes, as 64 hex characters or base64')
  }
  // A guessable token would publish traffic and queue figures; it travels as one Bearer word.
  if (config.metricsToken !== null && (config.metricsToken.length < 16 || /\s/.test(config.metricsToken)))
    problems.push('METRICS_TOKEN must be at least 16 characters without spaces (e.g. `openssl rand -hex 32`)')
  const dnsServers = get('DNS_SERVERS')
  if (dnsServers !== undefined) {
    try {
      config.dnsServers = parseDnsServers(dnsServers)
      if (config.dnsServers.length === 0) throw new Error('no server given')
    } catch (error) {
      problems.push(`DNS_SERVERS must be a comma-separated list of ip[:port] (${(error as Error).message})`)
    }
  }
  if (config.mail.smtpUrl !== null && !/^smtps?:\/\/[^/?#]/.test(config.mail.smtpUrl))
    problems.push('MAIL_SMTP_URL must be an smtp:// or smtps:// URL (smtp://user:pass@host:587)')
  if (!/^[^<>]*<[^\s@<>]+@[^\s@<>]+>$|^[^\s@<>]+@[^\s@<>]+$/.test(config.mail.from))
    problems.push('MAIL_FROM must be an address, optionally with a name: "dmarcwatch <noreply@example.com>"')
  for (const url of config.imapMailboxes) {
    // Checked as the poller reads it: a URL without a user or host used to fail at every poll.
    const parsed = parseImapUrl(url)
    if (!parsed.ok) {
      const why = parsed.failure.code === 'validation_failed' ? ` (${parsed.failure.message})` : ''
      problems.push(`IMAP_MAILBOXES must be space-separated imap:// or imaps:// URLs${why}`)
    }
  }
  // One process owns the embedded database (DATA_DIR): a ROLE=api there queued jobs nobody ran.
  if (config.role !== 'all' && databaseUrl === null)
    problems.push(
      `ROLE=${config.role} needs DATABASE_URL (PostgreSQL): on the embedded database one ROLE=all process does everything`,
    )
  if (problems.length > 0) throw new ConfigError(problems)
  return config
}

/** Why PUBLIC_URL cannot be the base of every link the service writes, or null. */
function publicUrlProblem(publicUrl: string): string | null {
  let url: URL
  try {
    url = new URL(publicUrl)
  } catch {
    return 'must be an http(s) URL'
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http(s) URL'
  // `http:example.com` parses, but is no URL a link can be built on.
  if (!/^https?:\/\//i.test(publicUrl)) return 'must be an http(s) URL such as https://dmarc.example.com'
  // Links are PUBLIC_URL + a path: a query or fragment would end up in the middle of each, and
  // credentials in every sign-in link and in the log.
  if (url.search !== '' || url.hash !== '' || publicUrl.includes('?') || publicUrl.includes('#'))
    return 'must not have a query or fragment'
  if (url.username !== '' || url.password !== '') return 'must not hold credentials'
  return null
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname
  } catch {
    return undefined
  }
}
