import { describe, expect, test } from 'bun:test'
import {
  buildManagedRecord,
  type HostedRecords,
  type ManagedSpfConfig,
} from '../../../domain/spf-management/managed-record.ts'
import {
  addSource,
  diffConfigs,
  nextVersion,
  removeSource,
  rollbackTo,
  type SpfVersion,
} from '../../../domain/spf-management/spf-change.ts'

const ZONE = 'spf.dmarcwatch.test'
const base: ManagedSpfConfig = {
  sources: [{ kind: 'include', domain: 'sendgrid.net', label: 'SendGrid', serviceId: 'sendgrid' }],
  all: '-all',
  flatten: 'auto',
}

function records(config: ManagedSpfConfig): HostedRecords {
  // Network sources only: nothing to resolve.
  const networks = { ...config, sources: config.sources.filter((s) => s.kind === 'ip4' || s.kind === 'ip6') }
  const result = buildManagedRecord({ domain: 'example.com', zone: ZONE, config: networks, resolved: null })
  if (!result.ok) throw new Error(JSON.stringify(result.failure))
  return result.value
}

describe('adding and removing sources', () => {
  test('adding a source normalises it; adding it again in any spelling changes nothing', () => {
    const added = addSource(base, { kind: 'ip4', network: '192.0.2.9/24', label: 'Office' }, ZONE)
    expect(added).toEqual({
      ok: true,
      value: {
        changed: true,
        config: {
          ...base,
          sources: [...base.sources, { kind: 'ip4', network: '192.0.2.0/24', label: 'Office' }],
        },
      },
    })
    const again = addSource(base, { kind: 'include', domain: 'SENDGRID.net.', label: 'other label' }, ZONE)
    expect(again.ok && again.value.changed).toBe(false)
    expect(again.ok && again.value.config).toBe(base)
  })

  test('an invalid or looping source is refused with the field that is wrong', () => {
    const invalid = addSource(base, { kind: 'ip6', network: '192.0.2.1' }, ZONE)
    expect(invalid.ok || invalid.failure).toEqual({
      code: 'validation_failed',
      message: "source.network: '192.0.2.1' is an IPv4 address: use kind ip4",
      errors: { 'source.network': ["'192.0.2.1' is an IPv4 address: use kind ip4"] },
    })
    const loop = addSource(base, { kind: 'include', domain: `acme.${ZONE}` }, ZONE)
    expect(loop.ok || loop.failure.code).toBe('validation_failed')
  })

  test('removing matches any spelling; removing an absent source changes nothing', () => {
    expect(removeSource(base, { kind: 'include', domain: 'SendGrid.NET.' })).toEqual({
      changed: true,
      config: { ...base, sources: [] },
    })
    const absent = removeSource(base, { kind: 'a', domain: 'sendgrid.net' })
    expect(absent.changed).toBe(false)
    expect(absent.config).toBe(base)
  })
})

describe('diffs', () => {
  test('sources compare by canonical term, labels aside; settings are listed', () => {
    const after: ManagedSpfConfig = {
      sources: [
        { kind: 'include', domain: 'SendGrid.net', label: 'renamed' },
        { kind: 'mx', domain: 'example.com' },
      ],
      all: '~all',
      flatten: 'auto',
    }
    expect(diffConfigs(base, after)).toEqual({
      added: [{ kind: 'mx', domain: 'example.com' }],
      removed: [],
      settings: ['all'],
    })
    expect(diffConfigs(after, base)).toEqual({
      added: [],
      removed: [{ kind: 'mx', domain: 'example.com' }],
      settings: ['all'],
    })
    expect(diffConfigs(null, base)).toEqual({ added: base.sources, removed: [], settings: [] })
    expect(diffConfigs(base, { ...base, flatten: 'never' }).settings).toEqual(['flatten'])
  })
})

describe('versions and rollback', () => {
  const v1Config: ManagedSpfConfig = {
    sources: [{ kind: 'ip4', network: '192.0.2.0/24' }],
    all: '~all',
    flatten: 'auto',
  }
  const v2Config: ManagedSpfConfig = { ...v1Config, sources: [{ kind: 'ip4', network: '198.51.100.0/24' }] }
  const history: SpfVersion[] = []
  history.push(
    nextVersion(history, {
      config: v1Config,
      records: records(v1Config),
      reason: 'created',
      actor: 'alice',
      createdAt: '2026-01-01T00:00:00Z',
    }),
  )
  history.push(
    nextVersion(history, {
      config: v2Config,
      records: records(v2Config),
      reason: 'moved office',
      actor: 'bob',
      createdAt: '2026-01-02T00:00:00Z',
    }),
  )

  test('versions number from 1', () => {
    expect(history.map((v) => v.version)).toEqual([1, 2])
  })

  test('a rollback is a new version serving exactly what the old one served', () => {
    const result = rollbackTo(history, 1, { actor: 'carol', createdAt: '2026-01-03T00:00:00Z' })
    expect(result).toEqual({
      ok: true,
      value: {
        changed: true,
        version: {
          version: 3,
          config: v1Config,
          records: history[0]!.records,
          reason: 'rollback to version 1',
          actor: 'carol',
          createdAt: '2026-01-03T00:00:00Z',
        },
      },
    })
    expect(result.ok && result.value.version.records.records[0]!.text).toBe('v=spf1 ip4:192.0.2.0/24 ~all')
  })

  test('rolling back to what is current changes nothing; an unknown version is not found', () => {
    const meta = { actor: 'carol', createdAt: '2026-01-03T00:00:00Z' }
    expect(rollbackTo(history, 2, meta)).toEqual({
      ok: true,
      value: { version: history[1]!, changed: false },
    })
    const missing = { ok: false, failure: { code: 'not_found', resource: 'spf_version' } } as const
    expect(rollbackTo(history, 7, meta)).toEqual(missing)
    expect(rollbackTo([], 1, meta)).toEqual(missing)
  })
})
