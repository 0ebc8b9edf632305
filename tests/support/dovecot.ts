// A private Dovecot IMAP server per test file, so the IMAP poller is tested against a real server
// (real sequence numbers, UIDs, MOVE, partial FETCH) rather than a mock. Everything it writes —
// config, passwd-file, maildirs, sockets, state, log — lives in one temp dir; /etc/dovecot and
// the system instance are never touched. CI installs the Debian package `dovecot-imapd`.

import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { connect } from 'node:net'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { ImapFlow } from 'imapflow'
import { freePort } from './free-port.ts'

export interface DovecotServer {
  port: number
  /** `imap://user:pass@127.0.0.1:port/<folder>` for one of the configured users. */
  url(user: string, folder?: string): string
  /**
   * Puts a raw message into a folder with IMAP APPEND (the folder is created when missing);
   * `internalDate` sets the message's INTERNALDATE (the server's arrival time).
   */
  append(
    user: string,
    folder: string,
    raw: string | Uint8Array,
    flags?: string[],
    internalDate?: Date,
  ): Promise<void>
  /** The raw sources of the messages in a folder, oldest first ([] when the folder does not exist). */
  messages(user: string, folder: string): Promise<string[]>
  stop(): Promise<void>
}

const CANDIDATES = ['/usr/sbin/dovecot', '/usr/local/sbin/dovecot']

function dovecotBinary(): string {
  const found = Bun.which('dovecot') ?? CANDIDATES.find((path) => existsSync(path))
  if (found) return found
  // Failing (never skipping) is deliberate: a missing server must not turn the IMAP tests green.
  throw new Error(
    'Dovecot is not installed, the IMAP poller tests need a real IMAP server: apt-get install dovecot-imapd',
  )
}

/** Resolves once the server sends its IMAP greeting, i.e. it is accepting logins. */
async function greets(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    const done = (result: boolean) => {
      socket.destroy()
      resolve(result)
    }
    socket.setTimeout(1000, () => done(false))
    socket.once('error', () => done(false))
    socket.once('data', (chunk) => done(chunk.toString().startsWith('* OK')))
  })
}

/** The name of an id in /etc/passwd or /etc/group (Bun's os.userInfo() only echoes $USER). */
function nameOf(file: '/etc/passwd' | '/etc/group', id: number | undefined): string {
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const fields = line.split(':')
    if (fields[2] === String(id) && fields[0]) return fields[0]
  }
  return userInfo().username
}

function config(dir: string, port: number, runAsRoot: boolean): string {
  // Dovecot refuses mail access as uid 0, so as root the mail processes run as `nobody`; as an
  // ordinary user every process runs as that user.
  const user = nameOf('/etc/passwd', process.getuid?.())
  const group = nameOf('/etc/group', process.getgid?.())
  const identity = runAsRoot
    ? ['mail_uid = nobody', 'mail_gid = nogroup']
    : [`default_internal_user = ${user}`, `default_internal_group = ${group}`, `default_login_user = ${user}`]
  return [
    `base_dir = ${dir}/run`,
    `state_dir = ${dir}/state`,
    `log_path = ${dir}/dovecot.log`,
    `instance_name = dw-test-${port}`,
    'protocols = imap',
    'listen = 127.0.0.1',
    'ssl = no',
    'disable_plaintext_auth = no',
    'auth_mechanisms = plain login',
    // A wrong password is answered at once instead of after the default 2 s penalty.
    'auth_failure_delay = 0',
    `mail_location = maildir:${dir}/mail/%u`,
    ...identity,
    'passdb {',
    '  driver = passwd-file',
    `  args = scheme=PLAIN username_format=%u ${dir}/passwd`,
    '}',
    'userdb {',
    '  driver = static',
    `  args = home=${dir}/mail/%u`,
    '}',
    // No chroot: a private test instance gains nothing from it, and a non-root user cannot chroot.
    'service anvil {',
    '  chroot =',
    '}',
    'service imap-login {',
    '  chroot =',
    '  inet_listener imap {',
    '    address = 127.0.0.1',
    `    port = ${port}`,
    '  }',
    '  inet_listener imaps {',
    '    port = 0',
    '  }',
    '}',
    '',
  ].join('\n')
}

export async function startDovecot(users: string[]): Promise<DovecotServer> {
  const binary = dovecotBinary()
  const dir = mkdtempSync(join(tmpdir(), 'dw-dovecot-'))
  const runAsRoot = process.getuid?.() === 0
  const passwords = new Map(users.map((user) => [user, `pw-${crypto.randomUUID()}`]))
  mkdirSync(join(dir, 'mail'))
  writeFileSync(join(dir, 'passwd'), [...passwords].map(([u, p]) => `${u}:{PLAIN}${p}::::::\n`).join(''))
  if (runAsRoot) {
    // The mail processes (as `nobody`) must reach the maildirs below the private temp dir.
    chmodSync(dir, 0o755)
    chownSync(join(dir, 'mail'), 65534, 65534)
  }
  const port = await freePort()
  const confPath = join(dir, 'dovecot.conf')
  writeFileSync(confPath, config(dir, port, runAsRoot))

  const child: Subprocess = Bun.spawn([binary, '-F', '-c', confPath], {
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'pipe',
  })
  const log = () => {
    const file = join(dir, 'dovecot.log')
    return existsSync(file) ? readFileSync(file, 'utf8') : ''
  }
  const stop = async () => {
    child.kill('SIGTERM')
    await child.exited
    rmSync(dir, { recursive: true, force: true })
  }

  const deadline = Date.now() + 10_000
  while (!(await greets(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      const stderr = child.exitCode !== null ? await new Response(child.stderr as ReadableStream).text() : ''
      await stop()
      throw new Error(`Dovecot did not start on 127.0.0.1:${port}\n${stderr}\n${log()}`)
    }
    await Bun.sleep(25)
  }

  const password = (user: string) => {
    const value = passwords.get(user)
    if (value === undefined) throw new Error(`no Dovecot user ${user}`)
    return value
  }
  const withClient = async <T>(user: string, run: (client: ImapFlow) => Promise<T>): Promise<T> => {
    const client = new ImapFlow({
      host: '127.0.0.1',
      port,
      secure: false,
      doSTARTTLS: false,
      auth: { user, pass: password(user) },
      logger: false,
      disableAutoIdle: true,
    })
    client.on('error', () => {})
    await client.connect()
    try {
      return await run(client)
    } finally {
      await client.logout().catch(() => client.close())
    }
  }

  return {
    port,
    url: (user, folder = 'INBOX') =>
      `imap://${encodeURIComponent(user)}:${encodeURIComponent(password(user))}@127.0.0.1:${port}/${encodeURIComponent(folder)}`,
    append: (user, folder, raw, flags, internalDate) =>
      withClient(user, async (client) => {
        await client.mailboxCreate(folder)
        const appended = await client.append(folder, Buffer.from(raw), flags, internalDate)
        if (!appended) throw new Error(`APPEND to ${folder} failed`)
      }),
    messages: (user, folder) =>
      withClient(user, async (client) => {
        const list = await client.list()
        const box = list.find((entry) => entry.path === folder)
        if (!box) return []
        const lock = await client.getMailboxLock(folder, { readOnly: true })
        try {
          if (!client.mailbox || client.mailbox.exists === 0) return []
          const fetched = await client.fetchAll('1:*', { uid: true, source: true })
          return fetched
            .sort((a, b) => a.uid - b.uid)
            .map((message) => message.source?.toString('latin1') ?? '')
        } finally {
          lock.release()
        }
      }),
    stop,
  }
}
