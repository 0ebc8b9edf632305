// docs/api.md "Authentication and limits": the client IP is the socket address unless TRUST_PROXY names trusted proxy hops.
// With N trusted hops, the N-1 rightmost X-Forwarded-For entries were appended by trusted proxies,
// so the client is the N-th entry from the right (Express's "trust proxy = N" semantics).

export function clientIp(input: {
  socketIp: string | null
  forwardedFor: string | null
  trustedHops: number
}): string {
  const socket = input.socketIp ?? 'unknown'
  if (input.trustedHops === 0 || input.forwardedFor === null) return socket
  const hops = input.forwardedFor
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
  if (hops.length === 0) return socket
  return withoutPort(hops[Math.max(0, hops.length - input.trustedHops)]!)
}

/**
 * Some proxies write the client's port too (`192.0.2.1:5678`, `[2001:db8::1]:443`; RFC 7239 §6
 * writes nodes that way): the client is the address, or each of its ports would count apart.
 */
function withoutPort(hop: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(hop)
  if (bracketed) return bracketed[1]!
  const ipv4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(hop)
  return ipv4 ? ipv4[1]! : hop
}
