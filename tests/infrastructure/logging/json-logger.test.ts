import { describe, expect, test } from 'bun:test'
import { batchedStdout, jsonLogger } from '../../../infrastructure/logging/json-logger.ts'

const turn = () => new Promise((resolve) => setImmediate(resolve))

describe('batchedStdout', () => {
  test('lines of one turn of the event loop go out in one write, in order', async () => {
    const writes: string[] = []
    const logger = jsonLogger(
      'info',
      batchedStdout((text) => writes.push(text)),
    )
    logger.info('one', { n: 1 })
    logger.debug('below the level')
    logger.warn('two')
    expect(writes).toEqual([])
    await turn()
    expect(writes).toHaveLength(1)
    const lines = writes[0]!.split('\n')
    expect(lines.pop()).toBe('')
    expect(lines.map((line) => JSON.parse(line).msg)).toEqual(['one', 'two'])
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'info', msg: 'one', n: 1 })
    await turn()
    expect(writes).toHaveLength(1)
  })

  test('a full batch is written at once, without waiting for the turn to end', () => {
    const writes: string[] = []
    const write = batchedStdout((text) => writes.push(text))
    for (let i = 0; i < 256; i++) write(`${i}\n`)
    expect(writes).toHaveLength(1)
    expect(writes[0]!.split('\n')).toHaveLength(257)
  })

  test("lines after a full batch follow it, in order, in the same turn's later write", async () => {
    const writes: string[] = []
    const write = batchedStdout((text) => writes.push(text))
    for (let i = 0; i < 300; i++) write(`${i}\n`)
    expect(writes).toHaveLength(1)
    await turn()
    expect(writes).toHaveLength(2)
    const lines = writes.join('').split('\n').slice(0, -1)
    expect(lines).toEqual(Array.from({ length: 300 }, (_, i) => String(i)))
  })

  test('a pending batch is written when the process exits', async () => {
    const child = Bun.spawn(
      [
        'bun',
        '-e',
        `import { batchedStdout } from '${new URL('../../../infrastructure/logging/json-logger.ts', import.meta.url).pathname}'
         const write = batchedStdout()
         write('before exit\\n')
         process.exit(3)`,
      ],
      { stdout: 'pipe', stderr: 'inherit' },
    )
    expect(await new Response(child.stdout).text()).toBe('before exit\n')
    expect(await child.exited).toBe(3)
  })
})
