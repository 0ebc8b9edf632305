import { expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../../src/config.ts'

test('defaults match the seed and contract', () => {
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
