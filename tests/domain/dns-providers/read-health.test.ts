import { describe, expect, test } from 'bun:test'
import type { DnsProvider } from '../../../domain/dns-providers/ports.ts'
import { providerFail, providerOk } from '../../../domain/dns-providers/ports.ts'
import { watchReads } from '../../../domain/dns-providers/read-health.ts'
import type { Connection } from '../../../domain/dns-providers/use-cases.ts'

// Every read through a connection is reported (domain/dns-providers/read-health.ts): a failure is
// recorded with its kind and message, a success clears it; writes pass through untouched.

const ZONE = { id: 'example.com.', name: 'example.com' }
const connection = { id: 'c1', accountId: 'a1', provider: 'powerdns' } as Connection
const at = new Date('2026-11-26T00:00:00Z')

function watched(reads: 'ok' | 'fail', opens = true) {
  const events: string[] = []
  const provider: DnsProvider = {
    kind: 'powerdns',
    authenticate: async () => providerOk({}),
    listZones: async () => (reads === 'ok' ? providerOk([ZONE]) : providerFail('unavailable', 'HTTP 503')),
    readRecords: async () =>
      reads === 'ok' ? providerOk([]) : providerFail('bad_credentials', 'HTTP 401 Unauthorized'),
    upsertRecordSet: async () => {
      events.push('upsert')
      return providerOk(undefined)
    },
    deleteRecordSet: async () => providerOk(undefined),
  }
  const open = watchReads(
    async () => (opens ? providerOk(provider) : providerFail('bad_credentials', 'cannot be opened')),
    {
      readFailed: async (accountId, id, error, when) => {
        events.push(`failed ${accountId}/${id} ${error} ${when.toISOString()}`)
      },
      readSucceeded: async (accountId, id) => {
        events.push(`ok ${accountId}/${id}`)
      },
    },
    () => at,
  )
  return { open, events }
}

describe('watchReads', () => {
  test('failed reads (zones, records) are recorded with kind and message', async () => {
    const { open, events } = watched('fail')
    const opened = await open(connection)
    expect(opened.ok).toBe(true)
    if (!opened.ok) return
    expect((await opened.value.listZones()).ok).toBe(false)
    expect((await opened.value.readRecords(ZONE, { name: 'example.com', type: 'TXT' })).ok).toBe(false)
    expect(events).toEqual([
      `failed a1/c1 unavailable: HTTP 503 ${at.toISOString()}`,
      `failed a1/c1 bad_credentials: HTTP 401 Unauthorized ${at.toISOString()}`,
    ])
  })

  test('a successful read clears; writes are not reads', async () => {
    const { open, events } = watched('ok')
    const opened = await open(connection)
    if (!opened.ok) throw new Error('not opened')
    await opened.value.readRecords(ZONE)
    await opened.value.upsertRecordSet(ZONE, { name: 'example.com', type: 'TXT', ttl: 60, values: ['x'] })
    expect(opened.value.kind).toBe('powerdns')
    expect(events).toEqual(['ok a1/c1', 'upsert'])
  })

  test('credentials that cannot be opened count as a failed read', async () => {
    const { open, events } = watched('ok', false)
    expect((await open(connection)).ok).toBe(false)
    expect(events).toEqual([`failed a1/c1 bad_credentials: cannot be opened ${at.toISOString()}`])
  })
})
