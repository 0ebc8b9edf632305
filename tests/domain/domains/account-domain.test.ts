import { expect, test } from 'bun:test'
import { findDmarcDomain, requireVerifiedDomain } from '../../../domain/dmarc/hosting-use-cases.ts'
import { findAccountDomain, requireVerifiedFor } from '../../../domain/domains/account-domain.ts'
import { findDomain, requireVerified } from '../../../domain/spf-management/managed-change.ts'
import type { SpfDomain } from '../../../domain/spf-management/ports.ts'

// One lookup of a domain named in a request and one verified-only rule for DNS writes
// (domain/domains/account-domain.ts), used by the report routes, DMARC hosting/policy and SPF.

const domains: SpfDomain[] = [
  { id: 1, name: 'xn--bcher-kva.de', verified: true, automationLevel: 'manual' as const },
  { id: 2, name: 'pending.example', verified: false, automationLevel: 'manual' as const },
]
const asked: string[] = []
const store = {
  async domain(accountId: string, name: string): Promise<SpfDomain | null> {
    asked.push(`${accountId}/${name}`)
    return accountId === 'a1' ? (domains.find((d) => d.name === name) ?? null) : null
  },
}

test('a path name is normalised like a creation name and looked up in the caller’s account only', async () => {
  asked.length = 0
  const found = await findAccountDomain((name) => store.domain('a1', name), ' Bücher.DE. ')
  expect(found).toEqual({ ok: true, value: domains[0]! })
  expect(asked).toEqual(['a1/xn--bcher-kva.de'])
  // Unknown, another account's, or not a domain name at all: the same 403, and a bad name costs no query.
  for (const [account, name] of [
    ['a1', 'other.example'],
    ['a2', 'bücher.de'],
    ['a1', 'http://x/'],
    ['a1', ''],
  ] as const) {
    expect(await findAccountDomain((n) => store.domain(account, n), name)).toEqual({
      ok: false,
      failure: { code: 'domain_not_found' },
    })
  }
  expect(asked).toEqual(['a1/xn--bcher-kva.de', 'a1/other.example', 'a2/xn--bcher-kva.de'])
})

test('DNS writes need a verified domain: one 403 shape, the refused write named', () => {
  expect(requireVerifiedFor(domains[0]!, 'spf')).toEqual({ ok: true, value: null })
  expect(requireVerifiedFor(domains[1]!, 'dmarc')).toEqual({
    ok: false,
    failure: {
      code: 'forbidden',
      message:
        'Verify ownership of pending.example first (POST /domains/pending.example/verify): DMARC records are only hosted and changed for verified domains.',
    },
  })
  expect(requireVerifiedFor(domains[1]!, 'spf')).toEqual({
    ok: false,
    failure: {
      code: 'forbidden',
      message:
        'Verify ownership of pending.example first (POST /domains/pending.example/verify): SPF changes are only made for verified domains.',
    },
  })
})

test('DMARC hosting and SPF management find and refuse through the one rule', async () => {
  for (const name of ['BÜCHER.de', 'pending.example', 'nowhere.example']) {
    const dmarc = await findDmarcDomain(store, 'a1', name)
    const spf = await findDomain(store, 'a1', name)
    expect(dmarc).toEqual(await findAccountDomain((n) => store.domain('a1', n), name))
    expect(spf).toEqual(dmarc)
  }
  expect(requireVerifiedDomain(domains[1]!)).toEqual(requireVerifiedFor(domains[1]!, 'dmarc'))
  expect(requireVerified(domains[1]!)).toEqual(requireVerifiedFor(domains[1]!, 'spf'))
})
