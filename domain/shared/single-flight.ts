// Concurrent calls for one key share the call in flight instead of each making its own: N requests
// of one API token at once cost one token lookup, not N. Nothing is kept once it settles (this is
// not a cache): a call made after the answer came back asks again, so a revoked token stops working
// as soon as the revocation is committed (docs/api.md "Authentication and limits"), give or take one lookup already in flight.

/** Calls joining one in flight get its answer; the arguments after the key are the first caller's. */
export function singleFlight<K, A extends unknown[], V>(
  load: (key: K, ...rest: A) => Promise<V>,
): (key: K, ...rest: A) => Promise<V> {
  const inFlight = new Map<K, Promise<V>>()
  return (key, ...rest) => {
    const pending = inFlight.get(key)
    if (pending !== undefined) return pending
    const started = load(key, ...rest).finally(() => inFlight.delete(key))
    inFlight.set(key, started)
    return started
  }
}
