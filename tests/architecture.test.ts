import { expect, test } from 'bun:test'
import { dirname, relative, resolve } from 'node:path'
import { Glob } from 'bun'

// domain/ is the pure core: no I/O, no framework, no runtime-specific APIs. Time, randomness and
// secrets are passed in. This test keeps it that way.

const FORBIDDEN_IMPORTS = [
  /^node:/,
  /^bun(:|$)/,
  /^elysia/,
  /^@elysiajs\//,
  /^drizzle-orm/,
  /^postgres$/,
  /^pg-boss/,
  /^@electric-sql\//,
  /^(fs|net|dgram|dns|http|https|child_process|os|path)$/,
  /infrastructure\//,
  /plugins\//,
  /\/src\//,
]
const FORBIDDEN_CALLS = [
  /\bBun\./,
  /\bprocess\./,
  /\bfetch\(/,
  /\bDate\.now\(/,
  /new Date\(\)/,
  /Math\.random\(/,
  /crypto\.getRandomValues/,
  /\bconsole\./,
  /\bsetTimeout\(/,
]

test('domain/ imports no I/O, framework or adapter modules and reads no clock or global randomness', async () => {
  const problems: string[] = []
  let files = 0
  for await (const file of new Glob('domain/**/*.ts').scan('.')) {
    files++
    const source = await Bun.file(file).text()
    for (const match of source.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
      const spec = match[1]!
      if (FORBIDDEN_IMPORTS.some((re) => re.test(spec))) problems.push(`${file}: imports ${spec}`)
    }
    const code = source.replace(/\/\/.*$/gm, '').replace(/\/\*[\s\S]*?\*\//g, '')
    for (const re of FORBIDDEN_CALLS) if (re.test(code)) problems.push(`${file}: uses ${re.source}`)
  }
  expect(files).toBeGreaterThan(5)
  expect(problems).toEqual([])
})

test('no utils grab-bags or export-star barrels anywhere', async () => {
  const problems: string[] = []
  for (const dir of ['domain', 'infrastructure', 'plugins', 'src']) {
    for await (const file of new Glob(`${dir}/**/*.ts`).scan('.')) {
      if (/(^|\/)utils?\.ts$/.test(file)) problems.push(`${file}: utils file`)
      if (/^export \* from/m.test(await Bun.file(file).text())) problems.push(`${file}: export * barrel`)
    }
  }
  expect(problems).toEqual([])
})

// The layers above domain/, as docs/architecture.md draws them. Each rule names the files it
// covers and the repository paths their imports must not reach (relative imports resolved).
const LAYER_RULES: { files: string; forbidden: RegExp; why: string }[] = [
  {
    files: 'infrastructure/**/*.ts',
    forbidden: /^(src|plugins)\//,
    why: 'adapters know the domain, never the app or its HTTP plugins',
  },
  {
    files: 'plugins/**/*.ts',
    forbidden: /^(infrastructure|src)\//,
    why: 'plugins are handed a logger and metrics by their interfaces',
  },
  {
    files: 'src/{routes,dashboard}/**/*.ts',
    forbidden: /^src\/(jobs|compose)(\.ts$|\/)/,
    why: 'routes are handed their deps by the composition root, never import a job or the root',
  },
  {
    files: 'src/jobs/**/*.ts',
    forbidden: /^src\/(compose|main|worker|cli)(\.ts$|\/)/,
    why: 'jobs are registered by the composition root, never reach back into it',
  },
  {
    files: 'src/{main,worker,cli,cli-ingest}.ts',
    forbidden: /^infrastructure\/(repositories|db\/schema)\//,
    why: 'the entry points start what src/compose/ builds, never a store or a query of their own',
  },
  {
    files: 'src/cli/**/*.ts',
    forbidden: /^infrastructure\/(repositories|db\/schema)\//,
    why: 'CLI commands take their deps from src/compose/, never a store or a query of their own',
  },
]

function importsOf(file: string, source: string): string[] {
  const found: string[] = []
  for (const match of source.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
    const spec = match[1]!
    if (spec.startsWith('.')) found.push(relative('.', resolve(dirname(file), spec)))
  }
  return found
}

test('layers import only downwards: infrastructure, plugins, routes, jobs and the entry points', async () => {
  const problems: string[] = []
  for (const rule of LAYER_RULES) {
    let files = 0
    for await (const file of new Glob(rule.files).scan('.')) {
      files++
      for (const target of importsOf(file, await Bun.file(file).text())) {
        if (rule.forbidden.test(target)) problems.push(`${file}: imports ${target} (${rule.why})`)
      }
    }
    expect(files).toBeGreaterThan(0)
  }
  expect(problems).toEqual([])
})

test('the layer check sees relative imports for what they are', () => {
  expect(importsOf('infrastructure/logging/x.ts', "import type { A } from '../../src/config.ts'")).toEqual([
    'src/config.ts',
  ])
  expect(importsOf('src/routes/x.ts', "import { a } from '../jobs/policy.ts'")).toEqual([
    'src/jobs/policy.ts',
  ])
  expect(importsOf('src/jobs/x.ts', "import { a } from 'pg-boss'")).toEqual([])
})

// Routes, pages and jobs receive ports and use cases from the composition root (src/compose.ts,
// src/compose/): they never take a Database or build a store, and type what they are handed by the
// ports and read models of domain/, so not even a type is imported from the repositories.
const BUILDS_NOTHING = 'src/{routes,dashboard,jobs}/**/*.ts'
const DATABASE_OR_STORE = /^infrastructure\/(db\/database\.ts$|repositories\/)/
/** Files that still build from the database, with the reason. */
const FILE_EXCEPTIONS: Record<string, string> = {}

function importStatements(file: string, source: string): { target: string; typeOnly: boolean }[] {
  const found: { target: string; typeOnly: boolean }[] = []
  for (const match of source.matchAll(/import\s+(type\s+)?[^'"]*?from\s*['"]([^'"]+)['"]/g)) {
    const spec = match[2]!
    if (spec.startsWith('.'))
      found.push({ target: relative('.', resolve(dirname(file), spec)), typeOnly: match[1] !== undefined })
  }
  return found
}

/** What the store check finds in one file (the file exceptions aside). */
function storeImports(file: string, source: string): string[] {
  const problems: string[] = []
  for (const { target, typeOnly } of importStatements(file, source)) {
    if (!DATABASE_OR_STORE.test(target)) continue
    problems.push(`${file}: imports ${target}${typeOnly ? ' (type)' : ''}`)
  }
  return problems
}

test('routes, pages and jobs take ports and use cases, never a Database or a store to build', async () => {
  const problems: string[] = []
  let files = 0
  for await (const file of new Glob(BUILDS_NOTHING).scan('.')) {
    files++
    if (FILE_EXCEPTIONS[file] === undefined) problems.push(...storeImports(file, await Bun.file(file).text()))
  }
  expect(files).toBeGreaterThan(50)
  expect(problems).toEqual([])
})

test('the store check sees a Database, a store built, and a type of an adapter for what they are', () => {
  expect(
    storeImports('src/routes/x.ts', "import type { Database } from '../../infrastructure/db/database.ts'"),
  ).toEqual(['src/routes/x.ts: imports infrastructure/db/database.ts (type)'])
  expect(
    storeImports('src/jobs/x.ts', "import {\n  pgX,\n} from '../../infrastructure/repositories/pg-x.ts'"),
  ).toEqual(['src/jobs/x.ts: imports infrastructure/repositories/pg-x.ts'])
  expect(
    storeImports(
      'src/dashboard/x.ts',
      "import type { Summary } from '../../infrastructure/repositories/pg-report-reader.ts'",
    ),
  ).toEqual(['src/dashboard/x.ts: imports infrastructure/repositories/pg-report-reader.ts (type)'])
  expect(
    storeImports(
      'src/dashboard/x.ts',
      "import type { Summary } from '../../domain/reports/aggregate-reads.ts'",
    ),
  ).toEqual([])
  expect(
    storeImports(
      'src/dashboard/x.ts',
      "import { pgReportReader } from '../../infrastructure/repositories/pg-report-reader.ts'",
    ),
  ).toEqual(['src/dashboard/x.ts: imports infrastructure/repositories/pg-report-reader.ts'])
})
