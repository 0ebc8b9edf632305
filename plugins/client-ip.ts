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
  return hops[Math.max(0, hops.length - input.trustedHops)]!
}
