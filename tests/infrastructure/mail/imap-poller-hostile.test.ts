import { afterAll, expect, test } from 'bun:test'
import type { Socket, TCPSocketListener } from 'bun'
import type { AcceptMessage } from '../../../domain/ingest/intake.ts'
import type { Logger } from '../../../domain/shared/logger.ts'
import { ok } from '../../../domain/shared/result.ts'
import { pollMailbox } from '../../../infrastructure/mail/imap-poller.ts'

// Hostile IMAP servers: Dovecot cannot be made to misbehave, so these peers speak just enough IMAP
// to get there. One lists a message of 100,000 bytes and then trickles its body a byte every
// 200 ms, so the socket's inactivity timeout never fires: before the poll's deadline such a server
// held the poll, and every poll after it, for good (a hostile-input sweep). The other says the
// message has 10 bytes and then answers every FETCH of its body with a full megabyte.

type State = { buffer: string; timer?: Timer }
type BodyAnswer = (socket: Socket<State>, tag: string, command: string) => void

const servers: TCPSocketListener<State>[] = []
const logger = Object.fromEntries(
  ['debug', 'info', 'warn', 'error'].map((level) => [level, () => {}]),
) as unknown as Logger

function answer(line: string, listedSize: number): string | { body: string } {
  const [, tag = '', verb = '', rest = ''] = /^(\S+) (\S+) ?(.*)$/.exec(line) ?? []
  const command = verb.toUpperCase()
  const caps = 'IMAP4rev1 LITERAL+ UIDPLUS MOVE'
  if (command === 'CAPABILITY') return `* CAPABILITY ${caps}\r\n${tag} OK done\r\n`
  if (command === 'LOGIN') return `${tag} OK [CAPABILITY ${caps}] logged in\r\n`
  if (command === 'CREATE') return `${tag} NO [ALREADYEXISTS] exists\r\n`
  if (command === 'SELECT' || command === 'EXAMINE')
    return `* 1 EXISTS\r\n* 0 RECENT\r\n* OK [UIDVALIDITY 1] x\r\n* OK [UIDNEXT 2] x\r\n* FLAGS (\\Seen)\r\n${tag} OK [READ-WRITE] selected\r\n`
  if (command === 'UID' && rest.toUpperCase().includes('FETCH') && rest.toUpperCase().includes('BODY'))
    return { body: tag }
  if ((command === 'UID' && rest.toUpperCase().includes('FETCH')) || command === 'FETCH')
    return `* 1 FETCH (UID 1 RFC822.SIZE ${listedSize} INTERNALDATE "01-Mar-2026 08:30:00 +0000")\r\n${tag} OK done\r\n`
  if ((command === 'UID' && rest.toUpperCase().startsWith('SEARCH')) || command === 'SEARCH')
    return `* SEARCH 1\r\n${tag} OK done\r\n`
  if (command === 'LOGOUT') return `* BYE\r\n${tag} OK bye\r\n`
  return `${tag} OK done\r\n`
}

function fakeImap(listedSize: number, onBody: BodyAnswer): string {
  const server = Bun.listen<State>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(socket) {
        socket.data = { buffer: '' }
        socket.write('* OK [CAPABILITY IMAP4rev1 LITERAL+ UIDPLUS MOVE] ready\r\n')
      },
      data(socket, bytes) {
        socket.data.buffer += bytes.toString()
        for (
          let end = socket.data.buffer.indexOf('\r\n');
          end >= 0;
          end = socket.data.buffer.indexOf('\r\n')
        ) {
          const line = socket.data.buffer.slice(0, end)
          socket.data.buffer = socket.data.buffer.slice(end + 2)
          const reply = answer(line, listedSize)
          if (typeof reply === 'string') socket.write(reply)
          else onBody(socket, reply.body, line)
        }
      },
      close(socket) {
        clearInterval(socket.data?.timer)
      },
    },
  })
  servers.push(server)
  return `imap://u:p@127.0.0.1:${server.port}/INBOX`
}
afterAll(() => {
  for (const server of servers) server.stop(true)
})

test('a server that trickles a message byte by byte is given up at the poll deadline', async () => {
  const url = fakeImap(100_000, (socket) => {
    socket.write('* 1 FETCH (UID 1 BODY[] {100000}\r\n')
    socket.data.timer = setInterval(() => socket.write('x'), 200)
  })
  const started = performance.now()
  const result = await pollMailbox(
    { accept: async () => ok({ id: 'm1', accountId: 'a' }), logger },
    { url, recipient: 'r@reports.test', timeoutMs: 1_000, deadlineMs: 2_000 },
  )
  const took = performance.now() - started
  // The inactivity timeout (1 s) never fired: the poll ended at its deadline, with the reason.
  expect(took).toBeGreaterThanOrEqual(2_000)
  expect(took).toBeLessThan(8_000)
  expect(result.error).toContain('the poll took longer than 2000 ms')
  expect(result.accepted).toBe(0)
}, 20_000)

const MiB = 1024 * 1024

/** Answers every partial FETCH of the body with a whole window of x's, and RFC822.SIZE `size`. */
function windowsOfX(size: number, fetches: { count: number }): BodyAnswer {
  return (socket, tag, command) => {
    fetches.count++
    // The partial FETCH asks for <start.length>.
    const start = /<(\d+)\.\d+>/.exec(command)?.[1] ?? '0'
    socket.write(`* 1 FETCH (UID 1 RFC822.SIZE ${size} BODY[]<${start}> {${MiB}}\r\n`)
    socket.write(Buffer.alloc(MiB, 0x78))
    socket.write(`)\r\n${tag} OK done\r\n`)
  }
}

test('a server that under-reports a message’s size in the listing: the download stops past the limit, and it is rejected', async () => {
  const fetches = { count: 0 }
  const url = fakeImap(10, windowsOfX(100 * MiB, fetches))
  const accept: AcceptMessage = async () => {
    throw new Error('an oversize message must not be accepted')
  }
  const result = await pollMailbox(
    { accept, logger },
    { url, recipient: 'r@reports.test', maxMessageBytes: 2.5 * MiB, timeoutMs: 5_000 },
  )
  expect(result).toEqual({ fetched: 1, accepted: 0, rejected: 1, failed: 0 })
  // The third window passed the limit; no fourth was asked for.
  expect(fetches.count).toBe(3)
}, 20_000)

test('a server that under-reports it in the FETCH too: imapflow ends the download, and it is rejected, not retried for ever', async () => {
  const fetches = { count: 0 }
  // 10 bytes said, a megabyte sent per window: imapflow stops past 2 × 10 bytes + one window.
  const url = fakeImap(10, windowsOfX(10, fetches))
  const accept: AcceptMessage = async () => {
    throw new Error('a message larger than its server says must not be accepted')
  }
  const result = await pollMailbox(
    { accept, logger },
    { url, recipient: 'r@reports.test', maxMessageBytes: 64 * MiB, timeoutMs: 5_000 },
  )
  // Left in the folder, it would stop every poll at it (failed, stop): rejected instead.
  expect(result).toEqual({ fetched: 1, accepted: 0, rejected: 1, failed: 0 })
  expect(fetches.count).toBeLessThanOrEqual(3)
}, 20_000)
