import { isIP } from 'node:net'
import type { DnsResolver } from '../../domain/dns/ports.ts'
import type { ProviderSettings } from '../../domain/dns-providers/credentials.ts'
import {
  type DnsProvider,
  type ProviderResult,
  providerFail,
  providerOk,
} from '../../domain/dns-providers/ports.ts'
import type { Connection, OpenProvider } from '../../domain/dns-providers/use-cases.ts'
import { checkPublicHost } from '../http/address-guard.ts'
import { createCloudflareProvider } from './cloudflare.ts'
import { createPowerDnsProvider } from './powerdns.ts'
import { providerHttpClient } from './provider-http.ts'
import { createRfc2136Provider } from './rfc2136.ts'

// From a stored connection (settings + opened secret) to the adapter behind the DnsProvider port.
// Provider endpoints are user-supplied, so they get the webhooks' SSRF rules (address-guard.ts):
// https only and public addresses only, unless the operator allows private targets
// (WEBHOOK_ALLOW_PRIVATE, which also allows http). The URL is checked here, when the adapter is
// built, so a refused endpoint is a 400 on the setting; PowerDNS and Cloudflare requests then go
// through the guarded client (provider-http.ts, docs/outbound-http.md), which checks every request
// again and sends it to the checked address (against DNS rebinding), under the provider limits. An
// RFC 2136 server name is resolved, checked, and the address used.

export interface RegistryDeps {
  dns: DnsResolver
  allowPrivate: boolean
  /** Per provider request (default: 10 s to connect and 30 s in all for HTTP, 5 s for DNS). */
  timeoutMs?: number
  /** The HTTP answer cap (default PROVIDER_MAX_RESPONSE_BYTES, 8 MB). */
  maxResponseBytes?: number
}

const CLOUDFLARE_API = 'https://api.cloudflare.com/client/v4'

type Checked = { ok: true; url: URL; address: string } | { ok: false; reason: string }

async function checkUrl(deps: RegistryDeps, raw: string): Promise<Checked> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return { ok: false, reason: `${raw} is not an absolute URL (e.g. https://dns.example.com:8081)` }
  }
  const httpAllowed = deps.allowPrivate && url.protocol === 'http:'
  // Named by its scheme: a `file:` or `data:` URL has the origin "null".
  if (url.protocol !== 'https:' && !httpAllowed)
    return { ok: false, reason: `the URL must use https, not ${url.protocol.replace(/:$/, '')}` }
  if (url.username || url.password)
    return { ok: false, reason: 'the URL must not carry a user name or password' }
  // No server listens on port 0 (the webhook URLs' rule, src/routes/webhook-url.ts).
  if (url.port === '0') return { ok: false, reason: 'the URL must not use port 0' }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
  const checked = await checkPublicHost(deps, host)
  if (!checked.ok) return { ok: false, reason: `${host} is refused: ${checked.reason}` }
  return { ok: true, url, address: checked.addresses[0]! }
}

function hostPort(server: string): { host: string; port: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(server)
  if (bracketed) return { host: bracketed[1]!, port: Number(bracketed[2] ?? 53) }
  if (isIP(server) === 6) return { host: server, port: 53 }
  const [host, port] = server.split(':')
  return { host: host!, port: Number(port ?? 53) }
}

export function providerRegistry(deps: RegistryDeps) {
  const http = providerHttpClient({
    dns: deps.dns,
    allowPrivate: deps.allowPrivate,
    ...(deps.timeoutMs ? { connectTimeoutMs: deps.timeoutMs, totalTimeoutMs: deps.timeoutMs } : {}),
    ...(deps.maxResponseBytes ? { maxResponseBytes: deps.maxResponseBytes } : {}),
  })
  async function build(settings: ProviderSettings, secret: string): Promise<ProviderResult<DnsProvider>> {
    const timeoutMs = deps.timeoutMs
    switch (settings.provider) {
      case 'powerdns': {
        const checked = await checkUrl(deps, settings.base_url)
        if (!checked.ok) return providerFail('invalid', checked.reason)
        return providerOk(
          createPowerDnsProvider({
            baseUrl: settings.base_url,
            apiKey: secret,
            serverId: settings.server_id,
            http,
          }),
        )
      }
      case 'cloudflare': {
        if (settings.base_url !== null) {
          const checked = await checkUrl(deps, settings.base_url)
          if (!checked.ok) return providerFail('invalid', checked.reason)
        }
        return providerOk(
          createCloudflareProvider({
            apiToken: secret,
            baseUrl: settings.base_url ?? CLOUDFLARE_API,
            ...(settings.account_id ? { accountId: settings.account_id } : {}),
            http,
          }),
        )
      }
      case 'rfc2136': {
        const { host, port } = hostPort(settings.server)
        if (!Number.isInteger(port) || port < 1 || port > 65535)
          return providerFail('invalid', `${settings.server}: the port must be 1 to 65535`)
        const checked = await checkPublicHost(deps, host)
        if (!checked.ok) return providerFail('invalid', `${host} is refused: ${checked.reason}`)
        return providerOk(
          createRfc2136Provider({
            server: { host: checked.addresses[0]!, port },
            zones: settings.zones,
            key: { name: settings.key_name, algorithm: settings.key_algorithm, secret },
            transport: settings.transport,
            ...(timeoutMs ? { timeoutMs } : {}),
          }),
        )
      }
    }
  }
  return { build }
}

/** Opens a stored connection: its secret from the store, then the adapter. */
export function providerOpener(
  registry: ReturnType<typeof providerRegistry>,
  secretOf: (accountId: string, id: string) => Promise<string | null>,
): OpenProvider {
  return async (connection: Connection) => {
    let secret: string | null
    try {
      secret = await secretOf(connection.accountId, connection.id)
    } catch {
      // A secret that does not open (SECRET_KEY changed): the user must authenticate again.
      return providerFail('bad_credentials', 'the stored credentials cannot be opened; authenticate again')
    }
    if (secret === null) return providerFail('not_found', 'the connection was removed')
    return registry.build(connection.settings, secret)
  }
}
