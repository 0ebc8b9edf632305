import { expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../../src/config.ts'

test("defaults match the README's configuration table", () => {
  const config = loadConfig({})
  expect(config).toMatchObject({
    port: 3000,
    databaseUrl: null,
    dataDir: './data',
    role: 'all',
    trustProxy: 0,
    rateLimits: { apiPerMinute: 60, publicPerMinute: 100, dnsWritesPerMinute: 10, webhooksPerHour: 1000 },
    maxJsonBodyBytes: 1024 * 1024,
    ingestMaxMessageBytes: 64 * 1024 * 1024,
    ingestMaxReportBytes: 1024 * 1024 * 1024,
  })
  expect(config.publicUrl).toBe('http://localhost:3000')
})

test('an empty variable counts as unset', () => {
  expect(loadConfig({ DATABASE_URL: '', PORT: ' ' }).databaseUrl).toBeNull()
})

test('every problem is reported at once, naming the variable', () => {
  try {
    loadConfig({ PORT: 'http', ROLE: 'boss', DATABASE_URL: 'mysql://x', RATE_LIMIT_API_PER_MINUTE: '-1' })
    throw new Error('expected a ConfigError')
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    const problems = (error as ConfigError).problems.join('\n')
    for (const name of ['PORT', 'ROLE', 'DATABASE_URL', 'RATE_LIMIT_API_PER_MINUTE'])
      expect(problems).toContain(name)
  }
})

test('the ingest domain defaults to the public host and trailing slashes are dropped', () => {
  const config = loadConfig({ PUBLIC_URL: 'https://dmarc.example.org/', INGEST_DOMAIN: '' })
  expect(config.publicUrl).toBe('https://dmarc.example.org')
  expect(config.ingestDomain).toBe('dmarc.example.org')
})

test('OAuth providers are off by default and on with a client id and secret, in login-page order', () => {
  expect(loadConfig({}).oauth.providers).toEqual([])
  const config = loadConfig({
    OAUTH_OIDC_ISSUER: 'https://idp.example.org/realms/main',
    OAUTH_OIDC_CLIENT_ID: 'dmarcwatch',
    OAUTH_OIDC_CLIENT_SECRET: 'oidc-secret',
    OAUTH_OIDC_NAME: 'Example SSO',
    OAUTH_LINKEDIN_CLIENT_ID: 'li-id',
    OAUTH_LINKEDIN_CLIENT_SECRET: 'li-secret',
    OAUTH_GOOGLE_CLIENT_ID: 'g-id.apps.googleusercontent.com',
    OAUTH_GOOGLE_CLIENT_SECRET: 'g-secret',
    OAUTH_MICROSOFT_CLIENT_ID: 'ms-id',
    OAUTH_MICROSOFT_CLIENT_SECRET: 'ms-secret',
  })
  expect(config.oauth.providers.map((p) => [p.id, p.label])).toEqual([
    ['google', 'Google'],
    ['microsoft', 'Microsoft'],
    ['linkedin', 'LinkedIn'],
    ['oidc', 'Example SSO'],
  ])
  const [google, microsoft, , oidc] = config.oauth.providers
  expect(google).toMatchObject({
    clientId: 'g-id.apps.googleusercontent.com',
    clientSecret: 'g-secret',
    tenant: null,
  })
  expect(google!.endpoints).toEqual({
    issuer: null,
    authorization: null,
    token: null,
    userinfo: null,
    jwks: null,
  })
  // Microsoft's multi-tenant endpoint unless a tenant is named.
  expect(microsoft!.tenant).toBe('common')
  expect(oidc!.endpoints.issuer).toBe('https://idp.example.org/realms/main')
  expect(
    loadConfig({
      OAUTH_MICROSOFT_CLIENT_ID: 'a',
      OAUTH_MICROSOFT_CLIENT_SECRET: 'b',
      OAUTH_MICROSOFT_TENANT: 'contoso.onmicrosoft.com',
    }).oauth.providers[0]!.tenant,
  ).toBe('contoso.onmicrosoft.com')
})

test('OAuth endpoint overrides: https, or http on loopback only', () => {
  const config = loadConfig({
    OAUTH_GOOGLE_CLIENT_ID: 'g',
    OAUTH_GOOGLE_CLIENT_SECRET: 's',
    OAUTH_GOOGLE_ISSUER: 'http://127.0.0.1:4444',
    OAUTH_GOOGLE_TOKEN_URL: 'https://tokens.example.org/token',
    OAUTH_GOOGLE_USERINFO_URL: 'http://localhost:4444/me',
  })
  expect(config.oauth.providers[0]!.endpoints).toEqual({
    issuer: 'http://127.0.0.1:4444',
    authorization: null,
    token: 'https://tokens.example.org/token',
    userinfo: 'http://localhost:4444/me',
    jwks: null,
  })
  for (const url of [
    'http://idp.example.org',
    'ftp://idp.example.org',
    'https://user:pw@idp.example.org',
    'nonsense',
  ])
    expect(() =>
      loadConfig({
        OAUTH_GOOGLE_CLIENT_ID: 'g',
        OAUTH_GOOGLE_CLIENT_SECRET: 's',
        OAUTH_GOOGLE_JWKS_URL: url,
      }),
    ).toThrow('OAUTH_GOOGLE_JWKS_URL must be an https URL')
})

test('OAuth configuration problems are named', () => {
  const problemsOf = (env: Record<string, string>) => {
    try {
      loadConfig(env)
      return ''
    } catch (error) {
      return (error as ConfigError).problems.join('\n')
    }
  }
  expect(problemsOf({ OAUTH_GOOGLE_CLIENT_ID: 'g' })).toContain(
    'OAUTH_GOOGLE_CLIENT_ID and OAUTH_GOOGLE_CLIENT_SECRET go together',
  )
  expect(problemsOf({ OAUTH_LINKEDIN_CLIENT_SECRET: 's' })).toContain(
    'OAUTH_LINKEDIN_CLIENT_ID and OAUTH_LINKEDIN_CLIENT_SECRET',
  )
  expect(problemsOf({ OAUTH_OIDC_CLIENT_ID: 'c', OAUTH_OIDC_CLIENT_SECRET: 's' })).toContain(
    'OAUTH_OIDC_ISSUER is needed',
  )
  expect(problemsOf({ OAUTH_OIDC_ISSUER: 'https://idp.example.org' })).toContain(
    'OAUTH_OIDC_CLIENT_ID and OAUTH_OIDC_CLIENT_SECRET are needed',
  )
  expect(
    problemsOf({
      OAUTH_MICROSOFT_CLIENT_ID: 'm',
      OAUTH_MICROSOFT_CLIENT_SECRET: 's',
      OAUTH_MICROSOFT_TENANT: 'bad/tenant',
    }),
  ).toContain('OAUTH_MICROSOFT_TENANT')
})

const problemsOf = (env: Record<string, string>): string => {
  try {
    loadConfig(env)
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.join('\n')
    throw error
  }
  return ''
}

test('PUBLIC_URL is the base of every link: no query, fragment or credentials, and a real URL', () => {
  expect(problemsOf({ PUBLIC_URL: 'https://example.com/app?x=1#frag' })).toContain(
    'PUBLIC_URL must not have a query',
  )
  expect(problemsOf({ PUBLIC_URL: 'https://example.com/#frag' })).toContain(
    'PUBLIC_URL must not have a query',
  )
  expect(problemsOf({ PUBLIC_URL: 'https://admin:hunter2@example.com' })).toContain(
    'must not hold credentials',
  )
  expect(problemsOf({ PUBLIC_URL: 'http:example.com' })).toContain('PUBLIC_URL must be an http(s) URL')
  expect(problemsOf({ PUBLIC_URL: 'ftp://example.com' })).toContain('PUBLIC_URL must be an http(s) URL')
  expect(loadConfig({ PUBLIC_URL: 'https://example.com/dmarc/' }).publicUrl).toBe('https://example.com/dmarc')
})

test('INGEST_DOMAIN is a domain name; PUBLIC_URL’s host stands in only when it is one', () => {
  for (const bad of [
    'http://example.com',
    'not a domain',
    'ex..com',
    '-bad-.com',
    '[::1]',
    '192.0.2.1',
    'a@b.com',
  ])
    expect(problemsOf({ INGEST_DOMAIN: bad })).toContain('INGEST_DOMAIN must be a domain name')
  expect(loadConfig({ INGEST_DOMAIN: 'Reports.Example.COM.' }).ingestDomain).toBe('reports.example.com')
  expect(loadConfig({ INGEST_DOMAIN: 'bücher.example' }).ingestDomain).toBe('xn--bcher-kva.example')
  expect(loadConfig({ INGEST_DOMAIN: 'mail.lan' }).ingestDomain).toBe('mail.lan')
  expect(loadConfig({ PUBLIC_URL: 'http://127.0.0.1:3000' }).ingestDomain).toBe('localhost')
  expect(loadConfig({ PUBLIC_URL: 'http://[::1]:3000' }).ingestDomain).toBe('localhost')
})

test('ROLE=api and ROLE=worker need PostgreSQL; DNS_SERVERS may not be an empty list', () => {
  expect(problemsOf({ ROLE: 'api' })).toContain('ROLE=api needs DATABASE_URL')
  expect(problemsOf({ ROLE: 'worker' })).toContain('ROLE=worker needs DATABASE_URL')
  expect(loadConfig({ ROLE: 'worker', DATABASE_URL: 'postgres://x@127.0.0.1/x' }).role).toBe('worker')
  expect(problemsOf({ DNS_SERVERS: ',' })).toContain('DNS_SERVERS')
})

test('IMAP_MAILBOXES are read as the poller reads them', () => {
  expect(problemsOf({ IMAP_MAILBOXES: 'imap://' })).toContain('IMAP_MAILBOXES')
  expect(problemsOf({ IMAP_MAILBOXES: 'imap://host/INBOX' })).toContain('no user name')
  expect(problemsOf({ IMAP_MAILBOXES: 'imap://u:p@host/INBOX imaps://u@[bad' })).toContain('IMAP_MAILBOXES')
  expect(loadConfig({ IMAP_MAILBOXES: 'imaps://u:p@mail.example.com/INBOX' }).imapMailboxes).toHaveLength(1)
})
