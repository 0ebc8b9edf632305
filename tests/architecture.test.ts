import { expect, test } from 'bun:test'
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
