import { plugin } from 'bun'
import type { OpenAPI3 } from 'openapi-typescript'

// Generates TypeScript types for the API from its OpenAPI document with openapi-typescript, for
// use with openapi-fetch (docs/api.md, "Generated client"):
//
//   bun run openapi:types <document URL or file> <output .d.ts>
//   bun run openapi:types http://127.0.0.1:3000/openapi/json dmarcwatch-api.d.ts
//
// openapi-typescript 7 builds its output with TypeScript's JavaScript compiler API, which
// TypeScript 7 (what this project type-checks with) no longer ships (openapi-typescript issue
// #2841). Here, and only in this process, `typescript` is TypeScript 6 from
// @typescript/typescript6, the package TypeScript publishes to run 6 beside 7. A project on
// TypeScript 5 or 6 runs `npx openapi-typescript <url> -o <file>` instead and gets the same file.

const typescript6 = Bun.resolveSync('@typescript/typescript6', import.meta.dir)
plugin({
  name: 'typescript6-for-openapi-typescript',
  setup(build) {
    build.onLoad({ filter: /node_modules\/typescript\/lib\/version\.cjs$/ }, () => ({
      contents: `import ts from ${JSON.stringify(typescript6)}; export default ts;`,
      loader: 'js',
    }))
  },
})

export async function generateTypes(document: OpenAPI3): Promise<string> {
  const { default: openapiTS, astToString } = await import('openapi-typescript')
  return astToString(await openapiTS(document))
}

async function readDocument(source: string): Promise<OpenAPI3> {
  if (/^https?:\/\//.test(source)) {
    const response = await fetch(source)
    if (!response.ok) throw new Error(`${source}: HTTP ${response.status}`)
    return (await response.json()) as OpenAPI3
  }
  return (await Bun.file(source).json()) as OpenAPI3
}

if (import.meta.main) {
  const [source, output] = process.argv.slice(2)
  if (source === undefined || output === undefined) {
    console.error('usage: bun tools/openapi-types.ts <document URL or file> <output .d.ts>')
    process.exit(2)
  }
  await Bun.write(output, await generateTypes(await readDocument(source)))
  console.error(`wrote ${output}`)
}
