import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import { type Database, openPostgres } from './database.ts'
import { wrapPglite } from './pglite-database.ts'
import { exclusiveQueue } from './socket-queue.ts'

// Only one process may open a PGlite directory. The process that opens it writes a lock file
// (`O_EXCL`, so two racing processes cannot both win) naming its pid. A service also serves the
// database on a Unix socket in DATA_DIR, named as psql expects (`psql -h DATA_DIR -U postgres`),
// so the CLI can reach the same database while the service runs instead of opening it twice.

const LOCK_FILE = 'dmarcwatch.lock'
const SOCKET_FILE = '.s.PGSQL.5432'
// sun_path is 108 bytes on Linux, including the terminating NUL.
const MAX_SOCKET_PATH = 107
// Clients wait in the queue for PGlite's lock, so a connection costs little; the limit bounds a
// burst of CLI processes (each holds one connection) rather than the work.
const MAX_SOCKET_CLIENTS = 64
// A socket client inside a transaction holds PGlite's lock: the service and every other client wait
// for it. One that sends nothing for this long is disconnected and its transaction rolled back.
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 15_000

/** pglite-socket 0.2 fields we reach into (its queue and its handlers' idle-timeout path). */
interface SocketServerInternals {
  queryQueue: unknown
  handlers: Set<{ handlerId: number; handleError(error: Error): void }>
}

export class DataDirBusyError extends Error {
  constructor(dir: string, pid: number, starting = false) {
    super(
      starting
        ? `${dir} is held by a dmarcwatch service (pid ${pid}) that is still starting: try again once it logs "dmarcwatch started" (if no dmarcwatch runs, pid ${pid} is another program: remove ${dir}/${LOCK_FILE})`
        : `${dir} is in use by another dmarcwatch process (pid ${pid}) that does not serve it on a socket (if no dmarcwatch runs, pid ${pid} is another program: remove ${dir}/${LOCK_FILE})`,
    )
    this.name = 'DataDirBusyError'
  }
}

/** How long a client waits for a starting service's socket (its first start initialises the database). */
const SOCKET_WAIT_MS = 60_000

/** Whether the holder's socket appears within SOCKET_WAIT_MS (it is created once the database is open). */
async function socketAppears(path: string): Promise<boolean> {
  const deadline = Date.now() + SOCKET_WAIT_MS
  while (!existsSync(path)) {
    if (Date.now() > deadline) return false
    await Bun.sleep(200)
  }
  return true
}

interface LockInfo {
  pid: number
  /** Tells this process's own live locks from a stale one whose pid was reused (pid 1 in a container). */
  nonce: string
  socket: string | null
}

const heldByThisProcess = new Set<string>()

function isLive(holder: LockInfo): boolean {
  if (holder.pid === process.pid) return heldByThisProcess.has(holder.nonce)
  return pidAlive(holder.pid)
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function readLock(path: string): LockInfo | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as LockInfo
  } catch {
    return null
  }
}

/** Takes the directory lock, or returns the live holder. Removes a lock left by a dead process. */
function takeLock(
  dir: string,
  socket: string | null,
): { taken: true; nonce: string } | { taken: false; holder: LockInfo } {
  const path = join(dir, LOCK_FILE)
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600)
      const nonce = crypto.randomUUID()
      writeSync(fd, JSON.stringify({ pid: process.pid, nonce, socket } satisfies LockInfo))
      closeSync(fd)
      heldByThisProcess.add(nonce)
      return { taken: true, nonce }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const holder = readLock(path)
      if (holder !== null && isLive(holder)) return { taken: false, holder }
      rmSync(path, { force: true })
    }
  }
  throw new Error(`could not take the lock ${path}`)
}

/**
 * The socket server for the CLI and psql, with our queue in place of pglite-socket's per-message one:
 * it keeps a client's statements and transactions atomic against the service's own queries, and
 * gives back whatever a client that goes away held (see socket-queue.ts).
 */
export function socketServer(
  pglite: PGlite,
  path: string,
  options: { idleTimeoutMs?: number } = {},
): PGLiteSocketServer {
  const server = new PGLiteSocketServer({ db: pglite, path, maxConnections: MAX_SOCKET_CLIENTS })
  const internals = server as unknown as SocketServerInternals
  internals.queryQueue = exclusiveQueue(pglite, {
    idleTimeoutMs: options.idleTimeoutMs ?? IDLE_IN_TRANSACTION_TIMEOUT_MS,
    // pglite-socket's own idle-timeout path: drops the client's slot and closes its socket.
    disconnect: (handlerId) => {
      for (const handler of internals.handlers)
        if (handler.handlerId === handlerId) handler.handleError(new Error('Idle timeout'))
    },
  })
  return server
}

/** The queue a socket server runs (tests and diagnostics). */
export function queueOf(server: PGLiteSocketServer): ReturnType<typeof exclusiveQueue> {
  return (server as unknown as { queryQueue: ReturnType<typeof exclusiveQueue> }).queryQueue
}

export interface EmbeddedOptions {
  dataDir: string
  /** Serve the database on a Unix socket for the CLI and psql (the service does; the CLI does not). */
  serveSocket: boolean
  /** How long the service waits for a CLI command holding the directory (default 60 s). */
  lockWaitMs?: number
}

/**
 * Opens the embedded database in DATA_DIR. When another live process holds it and serves a socket,
 * connects through that socket instead (a `postgres` Database); when it holds it without a socket,
 * fails with DataDirBusyError rather than opening the directory twice.
 */
export async function openEmbedded(options: EmbeddedOptions): Promise<Database> {
  const dir = resolve(options.dataDir)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const socketPath = join(dir, SOCKET_FILE)
  const serve = options.serveSocket && socketPath.length <= MAX_SOCKET_PATH
  let lock = takeLock(dir, serve ? socketPath : null)
  // The service started while a CLI command holds the directory (`bun run start`, then at once
  // `bun run cli account create`: the CLI won and the service died). A CLI holds it briefly: wait.
  const deadline = Date.now() + (options.lockWaitMs ?? SOCKET_WAIT_MS)
  while (options.serveSocket && !lock.taken && lock.holder.socket === null && Date.now() < deadline) {
    await Bun.sleep(200)
    lock = takeLock(dir, serve ? socketPath : null)
  }
  if (!lock.taken) {
    if (lock.holder.socket === null) throw new DataDirBusyError(dir, lock.holder.pid)
    // A CLI run right after `bun run start` found the lock before the socket: connect ENOENT.
    if (!(await socketAppears(lock.holder.socket))) throw new DataDirBusyError(dir, lock.holder.pid, true)
    return openPostgres('postgres://postgres@localhost/postgres', { max: 1, socketPath: lock.holder.socket })
  }
  const release = () => {
    heldByThisProcess.delete(lock.nonce)
    rmSync(join(dir, LOCK_FILE), { force: true })
  }
  let pglite: PGlite
  try {
    pglite = await PGlite.create(join(dir, 'pgdata'))
  } catch (error) {
    release()
    throw error
  }
  let server: PGLiteSocketServer | null = null
  if (serve) {
    rmSync(socketPath, { force: true })
    server = socketServer(pglite, socketPath)
    await server.start()
  }
  const stopSocket = async () => {
    if (server === null) return
    const queue = queueOf(server)
    await server.stop()
    // stop() detaches every client without waiting: wait until none holds or waits for the lock.
    for (let i = 0; i < 200 && (queue.state().holder !== null || queue.state().waiting > 0); i++)
      await Bun.sleep(10)
  }
  return wrapPglite(
    pglite,
    async () => {
      await stopSocket()
      await pglite.close()
      if (server !== null) rmSync(socketPath, { force: true })
      release()
    },
    server === null ? undefined : stopSocket,
  )
}

/** An in-memory PGlite, for tests of the embedded path. */
export async function openMemoryPglite(): Promise<Database> {
  const pglite = await PGlite.create()
  return wrapPglite(pglite, () => pglite.close())
}
