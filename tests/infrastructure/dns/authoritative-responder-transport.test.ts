import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createSocket } from 'node:dgram'
import { createServer } from 'node:net'
import {
  type AuthoritativeResponder,
  type AuthoritativeResponderOptions,
  type HostedRecordSet,
  startAuthoritativeResponder,
} from '../../../infrastructure/dns/authoritative-responder.ts'
import { createDnsPacketResolver } from '../../../infrastructure/dns/dns-packet-resolver.ts'
import { frame, query, sleep, tcpClient, udpExchange } from '../../support/raw-dns-client.ts'

const ZONE = 'spf.dmarcwatch.example'
const longSpf = `v=spf1 ${Array.from({ length: 40 }, (_, i) => `ip4:198.51.100.${i}`).join(' ')} -all`
const records: Record<string, HostedRecordSet> = {
  [`acme.${ZONE}`]: { txt: ['v=spf1 ip4:192.0.2.0/24 -all'] },
  // ~700 bytes: over 512, under 1232.
  [`long.${ZONE}`]: { txt: [longSpf] },
  // Three 500-byte records: over 1232 together.
  [`huge.${ZONE}`]: { txt: ['x', 'y', 'z'].map((c) => `v=test ${c.repeat(493)}`) },
  // Past what DNS can carry: one RDATA over 65535 bytes, or 300 records over 65535 together.
  [`giant.${ZONE}`]: { txt: ['g'.repeat(70_000)] },
  [`many.${ZONE}`]: { txt: Array.from({ length: 300 }, (_, i) => `${i} ${'m'.repeat(250)}`) },
}
const base: AuthoritativeResponderOptions = {
  host: '127.0.0.1',
  port: 0,
  zone: ZONE,
  nameservers: ['ns1.dmarcwatch.example'],
  hostmaster: 'hostmaster.dmarcwatch.example',
  lookup: async (name) => records[name] ?? null,
}

let responder: AuthoritativeResponder
beforeAll(async () => {
  responder = await startAuthoritativeResponder(base)
})
afterAll(() => responder.close())

describe('UDP size limits', () => {
  test('over 512 bytes without EDNS0 is TC=1 with empty sections', async () => {
    const reply = await udpExchange(responder.port, query(`long.${ZONE}`, 'TXT'))
    expect(reply).toMatchObject({
      flag_tc: true,
      flag_aa: true,
      rcode: 'NOERROR',
      answers: [],
      additionals: [],
    })
    expect(reply?.questions?.[0]?.name).toBe(`long.${ZONE}`)
  })

  test('with EDNS0 the advertised size counts, capped at 1232, and our OPT is echoed', async () => {
    const fits = await udpExchange(responder.port, query(`long.${ZONE}`, 'TXT', { edns: 1232 }))
    expect(fits).toMatchObject({ flag_tc: false, answers: [expect.objectContaining({ type: 'TXT' })] })
    expect(fits?.additionals).toEqual([
      expect.objectContaining({ type: 'OPT', udpPayloadSize: 1232, ednsVersion: 0 }),
    ])
    // 4096 advertised, yet ~1500 bytes are not sent over UDP (DNS Flag Day 2020).
    const capped = await udpExchange(responder.port, query(`huge.${ZONE}`, 'TXT', { edns: 4096 }))
    expect(capped).toMatchObject({
      flag_tc: true,
      answers: [],
      additionals: [expect.objectContaining({ type: 'OPT' })],
    })
    // Below 512 is read as 512 (RFC 6891 §6.2.5).
    const tiny = await udpExchange(responder.port, query(`acme.${ZONE}`, 'TXT', { edns: 100 }))
    expect(tiny).toMatchObject({ flag_tc: false, answers: [expect.objectContaining({ type: 'TXT' })] })
  })

  test('the project resolver retries a truncated answer over TCP and gets it whole', async () => {
    const servers = [{ host: '127.0.0.1', port: responder.port }]
    const answer = await createDnsPacketResolver({ servers, timeoutMs: 1000 }).resolve(`huge.${ZONE}`, 'TXT')
    expect(
      answer.status === 'ok' && answer.records.map((r) => (r.type === 'TXT' ? r.strings.join('') : '')),
    ).toEqual(records[`huge.${ZONE}`]!.txt)
    const udpOnly = createDnsPacketResolver({ servers, timeoutMs: 1000, tcpFallback: false })
    expect(await udpOnly.resolve(`huge.${ZONE}`, 'TXT')).toMatchObject({ status: 'error' })
  })
})

describe('TCP', () => {
  test('several queries on one connection, written in pieces, each answered', async () => {
    const client = await tcpClient(responder.port)
    const names = ['acme', 'huge', 'nobody'].map((label) => `${label}.${ZONE}`)
    const bytes = Buffer.concat(names.map((name, i) => frame(query(name, 'TXT', { id: 100 + i }))))
    // Cut inside the first length prefix, inside a question, and across two frames.
    for (const [start, end] of [
      [0, 1],
      [1, 20],
      [20, 60],
      [60, bytes.length],
    ] as const) {
      client.write(bytes.subarray(start, end))
      await sleep(15)
    }
    const replies = await Promise.all([client.next(), client.next(), client.next()])
    const byId = new Map(replies.map((reply) => [reply.id, reply]))
    expect(byId.get(100)).toMatchObject({
      rcode: 'NOERROR',
      answers: [expect.objectContaining({ type: 'TXT' })],
    })
    // Over TCP the 1500-byte answer is not truncated.
    expect(byId.get(101)).toMatchObject({ flag_tc: false })
    expect(byId.get(101)?.answers).toHaveLength(3)
    expect(byId.get(102)).toMatchObject({ rcode: 'NXDOMAIN' })
    client.socket.destroy()
  })

  test('a burst beyond the per-connection pipeline is held back, not dropped', async () => {
    // Slow lookups keep the first 16 pending while the rest wait in the paused socket.
    const slow = await startAuthoritativeResponder({
      ...base,
      lookup: (name) => sleep(20).then(() => records[name] ?? null),
    })
    try {
      const client = await tcpClient(slow.port)
      client.write(
        Buffer.concat(Array.from({ length: 50 }, (_, id) => frame(query(`acme.${ZONE}`, 'TXT', { id })))),
      )
      const replies = await Promise.all(Array.from({ length: 50 }, () => client.next()))
      expect(replies.map((reply) => reply.id).toSorted((a, b) => (a ?? 0) - (b ?? 0))).toEqual(
        Array.from({ length: 50 }, (_, id) => id),
      )
      client.socket.destroy()
    } finally {
      await slow.close()
    }
  })

  test('an answer too big for any DNS message is SERVFAIL and logged', async () => {
    const warnings: string[] = []
    const logged = await startAuthoritativeResponder({
      ...base,
      logger: { warn: (msg) => warnings.push(msg) },
    })
    try {
      const client = await tcpClient(logged.port)
      client.write(frame(query(`giant.${ZONE}`, 'TXT', { id: 1 })))
      expect(await client.next()).toMatchObject({ id: 1, rcode: 'SERVFAIL', answers: [] })
      client.write(frame(query(`many.${ZONE}`, 'TXT', { id: 2 })))
      expect(await client.next()).toMatchObject({ id: 2, rcode: 'SERVFAIL', answers: [] })
      expect(warnings).toEqual([
        'hosted DNS answer cannot be encoded',
        'hosted DNS answer exceeds 65535 bytes',
      ])
      client.socket.destroy()
    } finally {
      await logged.close()
    }
  })

  test('a client that half-closes after its query still gets the answer', async () => {
    const client = await tcpClient(responder.port)
    client.write(frame(query(`acme.${ZONE}`, 'TXT')))
    client.socket.end()
    expect(await client.next()).toMatchObject({ rcode: 'NOERROR' })
    await client.closed
  })

  test('a malformed message or an oversized length closes the connection', async () => {
    const garbage = await tcpClient(responder.port)
    garbage.write(frame(Buffer.from([1, 2, 3])))
    await garbage.closed
    const oversized = await tcpClient(responder.port)
    oversized.write(Buffer.from([0xff, 0xff, 0, 0]))
    await oversized.closed
    // The server is unaffected.
    expect(await udpExchange(responder.port, query(`acme.${ZONE}`, 'TXT'))).toMatchObject({
      rcode: 'NOERROR',
    })
  })

  test('idle connections are closed, and connections over the cap at once', async () => {
    const limited = await startAuthoritativeResponder({
      ...base,
      tcpIdleTimeoutMs: 150,
      maxTcpConnections: 1,
    })
    try {
      const first = await tcpClient(limited.port)
      const opened = performance.now()
      first.write(frame(query(`acme.${ZONE}`, 'TXT')))
      expect(await first.next()).toMatchObject({ rcode: 'NOERROR' })
      const second = await tcpClient(limited.port)
      await second.closed
      await first.closed
      expect(performance.now() - opened).toBeGreaterThanOrEqual(140)
      // The slot is free again.
      const third = await tcpClient(limited.port)
      third.write(frame(query(`acme.${ZONE}`, 'TXT')))
      expect(await third.next()).toMatchObject({ rcode: 'NOERROR' })
      third.socket.destroy()
    } finally {
      await limited.close()
    }
  })
})

describe('connections per client', () => {
  test('one client holds at most its share of the TCP connections; another client still gets in', async () => {
    const limited = await startAuthoritativeResponder({ ...base, maxTcpConnectionsPerClient: 2 })
    try {
      const held = [await tcpClient(limited.port), await tcpClient(limited.port)]
      const refused = await tcpClient(limited.port)
      await refused.closed
      // Another address (all of 127.0.0.0/8 is this machine's loopback) is another client.
      const other = await tcpClient(limited.port, '127.0.0.2')
      other.write(frame(query(`acme.${ZONE}`, 'TXT')))
      expect(await other.next()).toMatchObject({ rcode: 'NOERROR' })
      // A closed connection frees its place.
      held[0]!.socket.destroy()
      await held[0]!.closed
      await Bun.sleep(50)
      const again = await tcpClient(limited.port)
      again.write(frame(query(`acme.${ZONE}`, 'TXT')))
      expect(await again.next()).toMatchObject({ rcode: 'NOERROR' })
      for (const client of [held[1]!, other, again]) client.socket.destroy()
    } finally {
      await limited.close()
    }
  })
})

describe('lifecycle', () => {
  test('UDP and TCP share the port; close() releases both and can be called twice', async () => {
    const temporary = await startAuthoritativeResponder(base)
    const { port } = temporary
    const client = await tcpClient(port)
    await Promise.all([temporary.close(), temporary.close()])
    await client.closed
    expect(await udpExchange(port, query(`acme.${ZONE}`, 'TXT'), 200)).toBeNull()
    const udp = createSocket('udp4')
    await new Promise<void>((resolve) => udp.bind(port, '127.0.0.1', () => resolve()))
    const tcp = createServer()
    await new Promise<void>((resolve) => tcp.listen(port, '127.0.0.1', () => resolve()))
    await Promise.all([
      new Promise<void>((resolve) => udp.close(() => resolve())),
      new Promise<void>((resolve) => tcp.close(() => resolve())),
    ])
  })

  test('a fixed port already taken, or bad options, fail at start', async () => {
    await expect(startAuthoritativeResponder({ ...base, port: responder.port })).rejects.toThrow(
      `hosted DNS cannot bind 127.0.0.1:${responder.port}: EADDRINUSE`,
    )
    await expect(startAuthoritativeResponder({ ...base, zone: 'bad..zone' })).rejects.toThrow('zone')
    await expect(startAuthoritativeResponder({ ...base, nameservers: [] })).rejects.toThrow('nameserver')
    await expect(startAuthoritativeResponder({ ...base, host: 'localhost' })).rejects.toThrow('IP address')
    await expect(startAuthoritativeResponder({ ...base, hostmaster: 'a.b@example.com' })).rejects.toThrow(
      'local part',
    )
  })
})
