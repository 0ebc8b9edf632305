import postgres from 'postgres'

// DATABASE_URL as libpq reads it (PostgreSQL docs, "Connection Strings", §34.1.1.2): a host that
// is a directory names a Unix-domain socket, given either percent-encoded in the host part
// (postgresql://%2Fvar%2Frun%2Fpostgresql/dmarcwatch) or as the `host` query parameter
// (postgresql:///dmarcwatch?host=/var/run/postgresql), with `port` as a query parameter too.
// node-postgres, which pg-boss uses, reads these forms itself; postgres.js reads none of them
// (it would look the directory up as a host name, and send the parameters to the server), so its
// URL is rewritten here: the socket goes to its `path` option, a `host` or `port` parameter into
// the URL, and the URL keeps only what postgres.js understands.
//
// Why a socket: with PostgreSQL on the same machine, a statement over a Unix-domain socket costs
// both processes less than over loopback TCP (docs/operations.md, "PostgreSQL on the same machine").

/**
 * A postgres.js client for a URL in any of libpq's forms: every client of the service is made here.
 * A `path` in `options` (a running service's PGlite socket) wins over the URL's.
 */
export function postgresClient(
  url: string,
  options: postgres.Options<Record<string, never>> = {},
): postgres.Sql {
  const target = postgresJsTarget(url)
  return postgres(target.url, target.path === undefined ? options : { path: target.path, ...options })
}

export interface PostgresJsTarget {
  /** The URL for postgres.js, with a host it can parse. */
  url: string
  /** The socket file (`<directory>/.s.PGSQL.<port>`) when the URL names a socket directory. */
  path?: string
}

const URL_PARTS = /^(postgres(?:ql)?:\/\/)([^/?#]*)(.*)$/

export function postgresJsTarget(url: string): PostgresJsTarget {
  const parts = URL_PARTS.exec(url)
  if (parts === null) return { url }
  const [, scheme, authority = '', rest = ''] = parts
  const at = authority.lastIndexOf('@')
  const userinfo = at === -1 ? '' : authority.slice(0, at + 1)
  const hostPort = at === -1 ? authority : authority.slice(at + 1)
  // The port follows the last colon outside an IPv6 literal's brackets.
  const colon = hostPort.lastIndexOf(':')
  const hasPort = colon > hostPort.lastIndexOf(']')
  let host = decoded(hasPort ? hostPort.slice(0, colon) : hostPort)
  let port = hasPort ? hostPort.slice(colon + 1) : ''
  const queryAt = rest.indexOf('?')
  const path = queryAt === -1 ? rest : rest.slice(0, queryAt)
  const query = new URLSearchParams(queryAt === -1 ? '' : rest.slice(queryAt + 1))
  // libpq's `host` and `port` parameters override the URL's (also for TCP): postgres.js would send
  // them to the server as settings and be refused, while pg-boss's node-postgres honours them.
  const queryHost = query.get('host')
  const queryPort = query.get('port')
  if (queryHost === null && queryPort === null && !host.startsWith('/')) return { url }
  if (queryHost !== null) {
    host = queryHost
    query.delete('host')
  }
  if (queryPort !== null) {
    port = queryPort
    query.delete('port')
  }
  const search = query.size > 0 ? `?${query}` : ''
  const portPart = port === '' ? '' : `:${port}`
  if (!host.startsWith('/')) {
    // An IPv6 address goes back between brackets.
    const hostPart = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
    return { url: `${scheme}${userinfo}${hostPart}${portPart}${path}${search}` }
  }
  return {
    url: `${scheme}${userinfo}localhost${portPart}${path}${search}`,
    path: `${host.replace(/\/+$/, '')}/.s.PGSQL.${port === '' ? '5432' : port}`,
  }
}

/** A percent-encoded host as text; one that does not decode is left as it is (the driver refuses it). */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}
