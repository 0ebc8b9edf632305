import {
  type ProviderHttpOptions,
  providerHttpClient,
} from '../../infrastructure/dns-providers/provider-http.ts'
import { memoryDns } from './memory-dns.ts'

/**
 * The DNS providers' guarded client for test servers on loopback: private targets allowed (as
 * WEBHOOK_ALLOW_PRIVATE=1 gives the suite), no names to resolve (the servers are IP literals).
 */
export const loopbackProviderHttp = (options: Partial<ProviderHttpOptions> = {}) =>
  providerHttpClient({ dns: memoryDns({}), allowPrivate: true, ...options })
