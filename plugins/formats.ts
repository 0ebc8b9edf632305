// Loaded for its effect: @elysiajs/openapi must be evaluated first, since importing it replaces
// TypeBox's string formats with Zod-backed checks, and some of those throw instead of answering
// (`ipv4`, `ipv6`, `ip`, `cidr*` call Zod 3 methods that Zod 4 no longer has). A format check that
// throws turns a query such as `?source_ip=192.0.2.1` into a 500, so every registered format is
// wrapped to answer false on an exception, and the IP formats are registered again from node:net.
import '@elysiajs/openapi'
import { isIPv4, isIPv6 } from 'node:net'
import { FormatRegistry } from '@sinclair/typebox'

// Zone ids (`fe80::1%eth0`) are host-local, never an address a report or a request can mean.
const ipv6 = (value: string) => !value.includes('%') && isIPv6(value)

function cidr(value: string, family: 4 | 6 | null): boolean {
  const slash = value.indexOf('/')
  if (slash < 0) return false
  const address = value.slice(0, slash)
  const bits = value.slice(slash + 1)
  if (!/^\d{1,3}$/.test(bits)) return false
  if ((family === null || family === 4) && isIPv4(address)) return Number(bits) <= 32
  if ((family === null || family === 6) && ipv6(address)) return Number(bits) <= 128
  return false
}

const replacements: Record<string, (value: string) => boolean> = {
  ipv4: isIPv4,
  ipv6,
  ip: (value) => isIPv4(value) || ipv6(value),
  cidrv4: (value) => cidr(value, 4),
  cidrv6: (value) => cidr(value, 6),
  cidr: (value) => cidr(value, null),
}

for (const [name, check] of FormatRegistry.Entries()) {
  const own = replacements[name]
  FormatRegistry.Set(name, (value) => {
    try {
      return own ? own(value) : check(value)
    } catch {
      return false
    }
  })
}
for (const [name, check] of Object.entries(replacements)) {
  if (!FormatRegistry.Has(name)) FormatRegistry.Set(name, check)
}
