// Runs every test of the OpenSPF RFC 7208 suite (tests/fixtures/spf/rfc7208-tests.yml, from
// sdgathman/pyspf, see SOURCES.md) against checkHost, one bun test per suite test.

import { describe, expect, test } from 'bun:test'
import { checkHost, type SpfResult } from '../../../domain/spf/check-host.ts'
import { memoryDns, zoneFromSuite } from '../../support/memory-dns.ts'

interface SuiteTest {
  description?: string
  spec: string | number
  helo: string
  host: string
  mailfrom: string
  result: SpfResult | SpfResult[]
  explanation?: string
}

interface Scenario {
  description: string
  tests: Record<string, SuiteTest>
  zonedata: Record<string, unknown[]>
}

const suitePath = new URL('../../fixtures/spf/rfc7208-tests.yml', import.meta.url)
const parsed = Bun.YAML.parse(await Bun.file(suitePath).text())
// Bun.YAML.parse returns every `---` document of a multi-document file as an array.
const scenarios = (Array.isArray(parsed) ? parsed : [parsed]) as Scenario[]

/** `scenario description / test name` → why it cannot pass. Empty: every test runs. */
const SKIPPED: Record<string, string> = {}

// The reference harness sets the default explanation to the literal DEFAULT (pyspf testspf.py).
const DEFAULT_EXPLANATION = 'DEFAULT'

function identities(t: SuiteTest) {
  // RFC 7208 §2.4: with a null reverse-path, the MAIL FROM identity is postmaster@<HELO>.
  if (t.mailfrom === '') return { sender: `postmaster@${t.helo}`, domain: t.helo }
  const at = t.mailfrom.lastIndexOf('@')
  return { sender: t.mailfrom, domain: t.mailfrom.slice(at + 1) }
}

test('the suite file holds all 16 scenarios and 203 tests', () => {
  expect(scenarios).toHaveLength(16)
  const count = scenarios.reduce((n, scenario) => n + Object.keys(scenario.tests).length, 0)
  expect(count).toBe(203)
})

for (const scenario of scenarios) {
  describe(scenario.description, () => {
    for (const [name, t] of Object.entries(scenario.tests)) {
      const id = `${scenario.description} / ${name}`
      const reason = SKIPPED[id]
      if (reason !== undefined) {
        test.skip(`${name} (skipped: ${reason})`, () => {}) // the reason is in SKIPPED, shown in the name
        continue
      }
      test(`${name} (RFC 7208 ${t.spec})`, async () => {
        const dns = memoryDns(zoneFromSuite(scenario.zonedata))
        const outcome = await checkHost(
          { dns },
          {
            ip: t.host,
            ...identities(t),
            helo: t.helo,
            receivingHost: 'receiver.example.net',
            now: new Date('2026-01-01T00:00:00Z'),
            defaultExplanation: DEFAULT_EXPLANATION,
          },
        )
        const allowed = Array.isArray(t.result) ? t.result : [t.result]
        expect(allowed).toContain(outcome.result)
        if (t.explanation !== undefined) expect(outcome.explanation).toBe(t.explanation)
      })
    }
  })
}
