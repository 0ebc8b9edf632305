// A suite-shaped SPF workload for bench/spf.ts: every check of the RFC 7208 test suite
// (tests/fixtures/spf/rfc7208-tests.yml) against its scenario's zone, served from memory, so the
// figure is evaluation work alone (parsing, macros, limits, names) over the suite's mix of records,
// most of them broken on purpose. The same zones and inputs can drive mailauth's SPF (an optional
// comparison, loaded from a path outside the repository: docs/spf-management.md "Speed of SPF
// evaluation").

import type { DnsAnswer, DnsResolver } from '../domain/dns/ports.ts'
import { checkHost } from '../domain/spf/check-host.ts'
import { type MemoryDns, memoryDns, zoneFromSuite } from '../tests/support/memory-dns.ts'

interface SuiteTest {
  helo: string
  host: string
  mailfrom: string
}

interface Scenario {
  tests: Record<string, SuiteTest>
  zonedata: Record<string, unknown[]>
}

export interface SuiteCase {
  dns: SuiteDns
  ip: string
  domain: string
  sender: string
  helo: string
}

export async function loadSuiteCases(): Promise<SuiteCase[]> {
  const path = new URL('../tests/fixtures/spf/rfc7208-tests.yml', import.meta.url)
  const parsed = Bun.YAML.parse(await Bun.file(path).text())
  const scenarios = (Array.isArray(parsed) ? parsed : [parsed]) as Scenario[]
  const cases: SuiteCase[] = []
  for (const scenario of scenarios) {
    // One resolver per scenario, shared by its tests, as a process shares its DNS client.
    const dns = warmDns(memoryDns(zoneFromSuite(scenario.zonedata)))
    for (const t of Object.values(scenario.tests)) {
      // RFC 7208 §2.4: with a null reverse-path, the MAIL FROM identity is postmaster@<HELO>.
      const sender = t.mailfrom === '' ? `postmaster@${t.helo}` : t.mailfrom
      const domain = sender.slice(sender.lastIndexOf('@') + 1)
      cases.push({ dns, ip: t.host, domain, sender, helo: t.helo })
    }
  }
  return cases
}

/**
 * The answers of the suite's zone, each computed once by the test harness's resolver and then
 * served from a Map, like a warm TTL cache: the DNS layer costs both implementations the same.
 */
export interface SuiteDns extends DnsResolver {
  /** For mailauth: the same answers in node:dns's shape, converted once per question. */
  nodeShaped(name: string, type: string): Promise<unknown[]>
}

type NodeShaped = { ok: true; value: unknown[] } | { ok: false; code: string }

function warmDns(source: MemoryDns): SuiteDns {
  const answers = new Map<string, Promise<DnsAnswer>>()
  const shaped = new Map<string, NodeShaped>()
  const resolve: DnsResolver['resolve'] = (name, type) => {
    const key = `${type} ${name}`
    let answer = answers.get(key)
    if (answer === undefined) {
      answer = source.resolve(name, type)
      answers.set(key, answer)
    }
    // The harness logs every question; cleared so a long run stays in bounded memory.
    source.queries.length = 0
    return answer
  }
  return {
    resolve,
    async nodeShaped(name, type) {
      const key = `${type} ${name}`
      let entry = shaped.get(key)
      if (entry === undefined) {
        entry = toNodeShape(await resolve(name, type as Parameters<DnsResolver['resolve']>[1]))
        shaped.set(key, entry)
      }
      // Fresh copies each time: the caller may change what it is given.
      if (entry.ok)
        return entry.value.map((v) => (Array.isArray(v) ? [...v] : typeof v === 'object' ? { ...v } : v))
      throw Object.assign(new Error(entry.code), { code: entry.code })
    },
  }
}

const NOW = new Date('2026-01-01T00:00:00Z')

export async function evaluateWithDmarcwatch(c: SuiteCase): Promise<string> {
  const result = await checkHost(
    { dns: c.dns },
    {
      ip: c.ip,
      domain: c.domain,
      sender: c.sender,
      helo: c.helo,
      receivingHost: 'receiver.example.net',
      now: NOW,
    },
  )
  return result.result
}

/**
 * Runs every case `rounds` times, unmeasured: the JIT compiles its hot functions only after many
 * calls, and without this the first measured passes compare interpreters.
 */
export async function warmUp(
  cases: SuiteCase[],
  evaluate: (c: SuiteCase) => Promise<unknown>,
  rounds: number,
) {
  for (let r = 0; r < rounds; r++) for (const c of cases) await evaluate(c)
}

export interface Rate {
  /** Evaluations per second of wall time. */
  wall: number
  /** Evaluations per second of this process's CPU time (user + system): steadier on a busy machine. */
  cpu: number
}

/** Evaluation rates over `rounds` passes of every case, after one warm-up pass (see warmUp). */
export async function measure(
  cases: SuiteCase[],
  evaluate: (c: SuiteCase) => Promise<unknown>,
  rounds: number,
): Promise<Rate> {
  for (const c of cases) await evaluate(c)
  const started = performance.now()
  const cpu = process.cpuUsage()
  for (let r = 0; r < rounds; r++) for (const c of cases) await evaluate(c)
  const used = process.cpuUsage(cpu)
  const count = rounds * cases.length
  return {
    wall: count / ((performance.now() - started) / 1000),
    cpu: count / ((used.user + used.system) / 1e6),
  }
}

// mailauth's resolver contract is node:dns's promises.resolve: arrays on success, errors with
// ENOTFOUND / ENODATA / ETIMEOUT codes otherwise.
function toNodeShape(answer: DnsAnswer): NodeShaped {
  if (answer.status === 'nxdomain') return { ok: false, code: 'ENOTFOUND' }
  if (answer.status === 'nodata') return { ok: false, code: 'ENODATA' }
  if (answer.status === 'timeout') return { ok: false, code: 'ETIMEOUT' }
  if (answer.status === 'error') return { ok: false, code: 'ESERVFAIL' }
  const value = answer.records.flatMap((r): unknown[] => {
    switch (r.type) {
      case 'A':
      case 'AAAA':
        return [r.address]
      case 'TXT':
        return [r.strings]
      case 'MX':
        return [{ exchange: r.exchange, priority: r.preference }]
      case 'PTR':
        return [r.target]
      default:
        return []
    }
  })
  return { ok: true, value }
}

type MailauthSpf = (options: Record<string, unknown>) => Promise<{ status: { result: string } }>

/** mailauth's `spf()` from `<dir>/lib/spf/index.js`, or null when `dir` does not hold it. */
export async function loadMailauth(dir: string | undefined): Promise<MailauthSpf | null> {
  if (dir === undefined || dir === '') return null
  const file = `${dir.replace(/\/$/, '')}/lib/spf/index.js`
  if (!(await Bun.file(file).exists())) return null
  const module = (await import(file)) as { spf: MailauthSpf }
  return module.spf
}

export function mailauthEvaluator(spf: MailauthSpf) {
  return async (c: SuiteCase) => {
    const resolver = c.dns.nodeShaped
    const result = await spf({
      sender: c.sender,
      ip: c.ip,
      helo: c.helo,
      mta: 'receiver.example.net',
      resolver,
    })
    return result.status.result
  }
}
