import { mkdirSync } from 'node:fs'

export interface Figure {
  metric: string
  value: string
  target: string
  ok: boolean
}

/** Prints the figures beside their targets and appends them to bench/results/<name>.json. */
export async function report(name: string, figures: Figure[]): Promise<void> {
  const width = Math.max(...figures.map((f) => f.metric.length))
  const valueWidth = Math.max(...figures.map((f) => f.value.length))
  console.log(`\n${name} (${new Date().toISOString()}, Bun ${Bun.version})`)
  for (const f of figures) {
    console.log(
      `  ${f.ok ? 'ok  ' : 'MISS'} ${f.metric.padEnd(width)}  ${f.value.padStart(valueWidth)}   target: ${f.target}`,
    )
  }
  const dir = new URL('./results/', import.meta.url).pathname
  mkdirSync(dir, { recursive: true })
  await Bun.write(
    `${dir}${name}.json`,
    JSON.stringify({ name, at: new Date().toISOString(), figures }, null, 2),
  )
}
