import { type DemoDeps, installDemo, removeDemo } from '../../domain/demo/demo-use-cases.ts'

// `bun run cli demo --email E [--remove]` (docs/demo.md); its deps are built by src/compose/demo.ts.

export async function demoCommand(deps: DemoDeps, input: { email: string; remove: boolean }) {
  if (input.remove) return removeDemo(deps, input)
  return installDemo(deps, input)
}
