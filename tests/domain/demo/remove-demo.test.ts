import { expect, test } from 'bun:test'
import { removeDemo } from '../../../domain/demo/demo-use-cases.ts'
import { DEMO_DOMAIN } from '../../../domain/demo/demo-world.ts'

// Removing the demo domain waits for the account's pending report messages first: removed under a
// message being stored, the store failed and its retry stored the report into the next demo domain
// (a newcomer's `demo`, `demo --remove`, `demo` showed 131 reports where 90 were sent).

test('the account settles before the domain is removed', async () => {
  const steps: string[] = []
  const result = await removeDemo(
    {
      accountIdByEmail: async (email) => (email === 'you@example.com' ? 'acc-1' : null),
      settle: async (accountId) => {
        await Bun.sleep(5)
        steps.push(`settle ${accountId}`)
      },
      demo: {
        addVerified: async () => true,
        remove: async (accountId, name) => {
          steps.push(`remove ${accountId} ${name}`)
          return true
        },
      },
    },
    { email: 'you@example.com' },
  )
  expect(result).toEqual({ ok: true, value: { domain: DEMO_DOMAIN, removed: true } })
  expect(steps).toEqual(['settle acc-1', `remove acc-1 ${DEMO_DOMAIN}`])
})

test('an unknown account removes nothing and waits for nothing', async () => {
  const steps: string[] = []
  const result = await removeDemo(
    {
      accountIdByEmail: async () => null,
      settle: async () => void steps.push('settle'),
      demo: {
        addVerified: async () => true,
        remove: async () => {
          steps.push('remove')
          return true
        },
      },
    },
    { email: 'nobody@example.com' },
  )
  expect(result.ok).toBe(false)
  expect(steps).toEqual([])
})
