import { clientNetwork } from '../../domain/rate-limits/client-network.ts'

// One client must not hold every connection a listener allows (the SMTP listener, the hosted DNS
// responder's TCP side): a host trickling bytes on each keeps them all, and every other client out.

/**
 * Open connections per client, at most `max` each, a client being its address and an IPv6 one its
 * /56 or `ipv6Prefix` (domain/rate-limits/client-network.ts); connections refused are not counted.
 * `connection` is any id the caller gives each connection.
 */
export function connectionsPerClient(max: number, ipv6Prefix?: number) {
  const byAddress = new Map<string, number>()
  const addressOf = new Map<string, string>()
  return {
    open(connection: string, remoteAddress: string): boolean {
      const address = clientNetwork(remoteAddress, ipv6Prefix)
      const open = byAddress.get(address) ?? 0
      if (open >= max) return false
      byAddress.set(address, open + 1)
      addressOf.set(connection, address)
      return true
    },
    close(connection: string) {
      const address = addressOf.get(connection)
      if (address === undefined) return
      addressOf.delete(connection)
      const open = (byAddress.get(address) ?? 1) - 1
      if (open === 0) byAddress.delete(address)
      else byAddress.set(address, open)
    },
  }
}
