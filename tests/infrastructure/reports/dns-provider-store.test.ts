import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import type { PgBoss } from 'pg-boss'
import type { ImportStore } from '../../../domain/dns-providers/imports.ts'
import type { WriteStore } from '../../../domain/dns-providers/writes.ts'
import { secretBox } from '../../../infrastructure/crypto/secret-box.ts'
import { accounts } from '../../../infrastructure/db/schema/accounts.ts'
import {
  dnsProviderConnections,
  dnsProviderImports,
} from '../../../infrastructure/db/schema/dns-providers.ts'
import { domains } from '../../../infrastructure/db/schema/domains.ts'
import { auditLog } from '../../../infrastructure/db/schema/spf.ts'
import { createQueues, IMPORT_DOMAINS } from '../../../infrastructure/queue/catalogue.ts'
import { startBoss } from '../../../infrastructure/queue/pg-boss.ts'
import {
  type PgConnectionStore,
  pgConnectionStore,
  pgImportStore,
} from '../../../infrastructure/repositories/pg-dns-provider-store.ts'
import { pgWriteStore } from '../../../infrastructure/repositories/pg-dns-provider-writes.ts'
import { createTestDatabase, type TestDatabase } from '../../support/test-db.ts'

// The DNS provider store on PostgreSQL and PGlite (DW_TEST_DB): credentials sealed at rest and
// bound to their row, every read and write scoped by account, imports enqueued with their row,
// and writes whose state changes carry their audit rows.

let tdb: TestDatabase
let boss: PgBoss
let connections: PgConnectionStore
let imports: ImportStore
let writes: WriteStore
let owner: string
let stranger: string
const now = new Date('2026-03-01T10:00:00.000Z')
const TOKEN = 'pdns-api-key-that-must-never-be-stored-in-clear'
const page = { page: 1, perPage: 25 }
const db = () => tdb.database.db

const settings = {
  provider: 'powerdns' as const,
  base_url: 'https://dns.example.net:8081',
  server_id: 'localhost',
}

beforeAll(async () => {
  tdb = await createTestDatabase()
  boss = await startBoss(tdb.database, { background: false })
  await createQueues(boss)
  const secrets = await secretBox(new Uint8Array(32).fill(9))
  connections = pgConnectionStore(db(), { secrets })
  imports = pgImportStore(db(), { boss })
  writes = pgWriteStore(db())
  const [a, b] = await db()
    .insert(accounts)
    .values([{ ingestKey: 'dp-owner' }, { ingestKey: 'dp-stranger' }])
    .returning({ id: accounts.id })
  owner = a!.id
  stranger = b!.id
}, 60_000)
afterAll(async () => {
  await boss.stop({ graceful: false })
  await tdb.drop()
})

const connect = (accountId: string, name = 'pdns') =>
  connections.insert(accountId, { settings, secret: TOKEN, name, providerAccount: null, now })

describe('connections', () => {
  test('the secret is sealed at rest, bound to its row, and never part of a Connection', async () => {
    const created = await connect(owner)
    expect(created).toMatchObject({ accountId: owner, provider: 'powerdns', name: 'pdns', settings })
    expect(JSON.stringify(created)).not.toContain(TOKEN)

    const [row] = await db()
      .select()
      .from(dnsProviderConnections)
      .where(eq(dnsProviderConnections.id, created.id))
    expect(row!.credentialsSealed).toStartWith('v1.')
    expect(JSON.stringify(row)).not.toContain(TOKEN)
    expect(row!.settings).toEqual({ base_url: settings.base_url, server_id: 'localhost' })
    expect(await connections.secretOf(owner, created.id)).toBe(TOKEN)

    // Copied into another connection's row, the sealed value does not open (its id is the context).
    const other = await connect(owner, 'copy')
    await db()
      .update(dnsProviderConnections)
      .set({ credentialsSealed: row!.credentialsSealed })
      .where(eq(dnsProviderConnections.id, other.id))
    await expect(connections.secretOf(owner, other.id)).rejects.toThrow()
    expect(await connections.remove(owner, other.id)).toBe(true)
  })

  test('another account sees, opens and removes nothing', async () => {
    const [mine] = await connections.all(owner)
    expect(await connections.get(stranger, mine!.id)).toBeNull()
    expect(await connections.secretOf(stranger, mine!.id)).toBeNull()
    expect(await connections.list(stranger, page)).toEqual({ items: [], total: 0 })
    expect(await connections.all(stranger)).toEqual([])
    expect(await connections.remove(stranger, mine!.id)).toBe(false)
    expect(await connections.get(owner, 'not-a-uuid')).toBeNull()
    const listed = await connections.list(owner, page)
    expect(listed.total).toBe(1)
    expect(listed.items[0]!.id).toBe(mine!.id)
  })
})

describe('imports', () => {
  test('created queued with its job; progress is counted; scoped by account', async () => {
    const [connection] = await connections.all(owner)
    const created = await imports.create(owner, { connectionId: connection!.id, zones: ['a.example'], now })
    expect(created).toMatchObject({
      status: 'queued',
      provider: 'powerdns',
      zonesRequested: ['a.example'],
      total: null,
    })
    const jobs = await boss.findJobs(IMPORT_DOMAINS.name, { data: { importId: created.id } })
    expect(jobs).toHaveLength(1)

    await imports.start(created.id, 3, now)
    await imports.record(created.id, {
      zone: 'a.example',
      domain: 'a.example',
      status: 'imported',
      reason: null,
      verified: true,
    })
    await imports.record(created.id, {
      zone: 'b.example',
      domain: 'b.example',
      status: 'skipped',
      reason: 'exists',
      verified: false,
    })
    await imports.finish(created.id, 'done', null, now)
    const loaded = await imports.get(owner, created.id)
    expect(loaded).toMatchObject({
      status: 'done',
      total: 3,
      imported: 1,
      skipped: 1,
      failed: 0,
      startedAt: now,
      finishedAt: now,
    })
    expect(loaded!.results.map((r) => r.zone)).toEqual(['a.example', 'b.example'])
    expect(await imports.get(stranger, created.id)).toBeNull()
    expect((await imports.load(created.id))?.id).toBe(created.id)
  })

  test('an import can only use its own account’s connection (composite foreign key)', async () => {
    const [connection] = await connections.all(owner)
    const insert = async () => {
      await db()
        .insert(dnsProviderImports)
        .values({ accountId: stranger, connectionId: connection!.id, status: 'queued', createdAt: now })
    }
    await expect(insert()).rejects.toThrow()
  })
})

describe('writes', () => {
  test('state changes carry their audit rows; reads are scoped by account', async () => {
    const [connection] = await connections.all(owner)
    await db()
      .insert(domains)
      .values({ accountId: owner, name: 'w.example', verificationToken: 't', verifiedAt: now })
    const after = { name: 'w.example', type: 'TXT', ttl: 300, values: ['v=spf1 -all'] }
    const write = await writes.insert({
      accountId: owner,
      domain: 'w.example',
      connectionId: connection!.id,
      provider: 'powerdns',
      zone: { id: 'w.example.', name: 'w.example' },
      name: 'w.example',
      type: 'TXT',
      before: null,
      after,
      actor: 'user:test',
      createdAt: now,
    })
    expect(write).toMatchObject({
      status: 'planned',
      zone: { id: 'w.example.', name: 'w.example' },
      before: null,
      after,
    })
    const audit = {
      action: 'dns_provider.write' as const,
      actor: 'user:test',
      reason: 'test',
      before: null,
      after,
      at: now,
    }
    const applied = await writes.change(owner, write.id, { status: 'applied', appliedAt: now }, audit)
    expect(applied).toMatchObject({ status: 'applied', appliedAt: now })
    const rows = await db().select().from(auditLog).where(eq(auditLog.accountId, owner))
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({
      action: 'dns_provider.write',
      before: null,
      after: { provider: 'powerdns', zone: 'w.example', set: after },
    })
    expect(rows[0]!.domainId).not.toBeNull()

    expect(await writes.get(stranger, write.id)).toBeNull()
    expect(await writes.list(stranger, page)).toEqual({ items: [], total: 0 })
    expect((await writes.list(owner, page)).total).toBe(1)
    await expect(writes.change(stranger, write.id, { status: 'failed' })).rejects.toThrow()
    expect((await writes.get(owner, write.id))!.status).toBe('applied')

    // Removing the connection keeps the write (without its connection) for the record.
    expect(await connections.remove(owner, connection!.id)).toBe(true)
    expect((await writes.get(owner, write.id))!.connectionId).toBeNull()
  })
})
