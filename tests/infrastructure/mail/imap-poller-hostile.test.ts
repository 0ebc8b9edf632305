import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { TCPSocketListener } from 'bun'
import type { Logger } from '../../../domain/shared/logger.ts'
import { ok } from '../../../domain/shared/result.ts'
import { pollMailbox } from '../../../infrastructure/mail/imap-poller.ts'

// A hostile IMAP server: it answers a FETCH with a literal of 100,000 bytes and then sends one byte
// every 200 ms, so the socket's inactivity timeout never fires. Before the poll's deadline such a
// server held the poll, and every poll after it, for good (a hostile-input sweep; Dovecot cannot be
// made to trickle, so this peer speaks just enough IMAP to get there).

let server: TCPSocketListener<{ buffer: string; timer?: Timer }>
const logger = Object.fromEntries(
  ['debug', 'info', 'warn', 'error'].map((level) => [level, () => {}]),
) as unknown as Logger

function answer(line: string): string | 'trickle' {
  const [, tag = '', verb = '', rest = ''] = /^(\S+) (\S+) ?(.*)$/.exec(line) ?? []
  const command = verb.toUpperCase()
  const caps = 'IMAP4rev1 LITERAL+ UIDPLUS MOVE'
  if (command === 'CAPABILITY') return `* CAPABILITY ${caps}\r\n${tag} OK done\r\n`
  if (command === 'LOGIN') return `${tag} OK [CAPABILITY ${caps}] logged in\r\n`
  if (command === 'CREATE') return `${tag} NO [ALREADYEXISTS] exists\r\n`
  if (command === 'SELECT' || command === 'EXAMINE')
    return `* 1 EXISTS\r\n* 0 RECENT\r\n* OK [UIDVALIDITY 1] x\r\n* OK [UIDNEXT 2] x\r\n* FLAGS (\\Seen)\r\n${tag} OK [READ-WRITE] selected\r\n`
  if (command === 'UID' && rest.toUpperCase().includes('FETCH') && rest.toUpperCase().includes('BODY'))
    return 'trickle'
  if (command === 'UID' && rest.toUpperCase().includes('FETCH'))
    return `* 1 FETCH (UID 1 RFC822.SIZE 100000)\r\n${tag} OK done\r\n`
  if (command === 'UID' && rest.toUpperCase().startsWith('SEARCH')) return `* SEARCH 1\r\n${tag} OK done\r\n`
  if (command === 'SEARCH') return `* SEARCH 1\r\n${tag} OK done\r\n`
  if (command === 'FETCH') return `* 1 FETCH (UID 1 RFC822.SIZE 100000)\r\n${tag} OK done\r\n`
  if (command === 'LOGOUT') return `* BYE\r\n${tag} OK bye\r\n`
  return `${tag} OK done\r\n`
}

beforeAll(() => {
  server = Bun.listen({
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
          const reply = answer(line)
          if (reply !== 'trickle') {
            socket.write(reply)
            continue
          }
          socket.write('* 1 FETCH (UID 1 BODY[] {100000}\r\n')
          socket.data.timer = setInterval(() => socket.write('x'), 200)
        }
      },
      close(socket) {
        clearInterval(socket.data?.timer)
      },
    },
  })
})
afterAll(() => server.stop(true))

test('a server that trickles a message byte by byte is given up at the poll deadline', async () => {
  const started = performance.now()
  const result = await pollMailbox(
    { accept: async () => ok({ id: 'm1', accountId: 'a' }), logger },
    {
      url: `imap://u:p@127.0.0.1:${server.port}/INBOX`,
      recipient: 'r@reports.test',
      timeoutMs: 1_000,
      deadlineMs: 2_000,
    },
  )
  const took = performance.now() - started
  // The inactivity timeout (1 s) never fired: the poll ended at its deadline, with the reason.
  expect(took).toBeGreaterThanOrEqual(2_000)
  expect(took).toBeLessThan(8_000)
  expect(result.error).toContain('the poll took longer than 2000 ms')
  expect(result.accepted).toBe(0)
}, 20_000)
