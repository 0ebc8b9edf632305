import { expect, test } from 'bun:test'
import { RETRY_DELAYS_MS } from '../../../domain/webhooks/schedule.ts'
import {
  MAX_RESPONSE_BYTES,
  RESPONSE_SNIPPET_BYTES,
  WEBHOOK_TIMEOUT_MS,
  WEBHOOK_USER_AGENT,
} from '../../../infrastructure/http/webhook-sender.ts'

// docs/webhooks.md promises customers that its verification example is what our own test receiver
// runs. This keeps the promise: the TypeScript block in the docs and the marked region of
// tests/support/webhook-receiver.ts must be the same code.

const docs = await Bun.file('docs/webhooks.md').text()

test('the documented receiver example is the code the test receiver runs', async () => {
  const receiver = await Bun.file('tests/support/webhook-receiver.ts').text()
  const marked =
    /\/\/ --- receiver example \(docs\/webhooks\.md\) ---\n([\s\S]*?)\/\/ --- end of receiver example ---/.exec(
      receiver,
    )
  const documented = /```ts\n([\s\S]*?)```/.exec(docs)
  expect(marked).not.toBeNull()
  expect(documented).not.toBeNull()
  expect(documented![1]!.trim()).toBe(marked![1]!.trim())
  expect(documented![1]!.trim().split('\n').length).toBeLessThanOrEqual(20)
})

test('the documented figures are the ones in the code', () => {
  expect(RETRY_DELAYS_MS).toEqual([0, 5_000, 30_000, 300_000, 3_600_000])
  for (const due of [
    'first failure + 5 s',
    'first failure + 30 s',
    'first failure + 5 min',
    'first failure + 1 h',
  ])
    expect(docs).toContain(due)
  expect(WEBHOOK_TIMEOUT_MS).toBe(10_000)
  expect(docs).toContain('10 s per attempt')
  expect(MAX_RESPONSE_BYTES).toBe(64 * 1024)
  expect(RESPONSE_SNIPPET_BYTES).toBe(1024)
  expect(docs).toContain('At most 64 KB of a response body is read')
  expect(docs).toContain(`\`${WEBHOOK_USER_AGENT}\``)
})
