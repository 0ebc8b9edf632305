import { expect, test } from 'bun:test'
import { DiscoveryError, discoverProvider } from '../../../infrastructure/oauth/discovery.ts'
import { ClaimsError, fetchUserinfo } from '../../../infrastructure/oauth/id-token.ts'
import { OAUTH_MAX_RESPONSE_BYTES, oauthHttpClient } from '../../../infrastructure/oauth/oauth-registry.ts'
import { hugeAnswer, redirectTo, serve, stopAfterEach } from '../../support/hostile-http.ts'
import { memoryDns } from '../../support/memory-dns.ts'

// OAuth's requests go through the guarded client (docs/outbound-http.md, docs/oauth.md): an issuer
// or UserInfo endpoint that redirects, streams without end or answers junk is a clear failure, and
// the access token never follows a redirect.

const started = stopAfterEach()
const http = oauthHttpClient(memoryDns({}))

async function discoveryFailure(issuer: string): Promise<string> {
  try {
    await discoverProvider(issuer, http)
  } catch (error) {
    expect(error).toBeInstanceOf(DiscoveryError)
    return (error as Error).message
  }
  throw new Error('discovery should have failed')
}

test('discovery refuses a redirect, an endless document and junk', async () => {
  const elsewhere = started(serve(() => Response.json({ issuer: 'x' })))
  const hop = started(redirectTo(`${elsewhere.origin}/.well-known/openid-configuration`))
  expect(await discoveryFailure(hop.origin)).toContain('redirected')
  expect(elsewhere.requests).toEqual([])
  const huge = started(hugeAnswer(300 * 1024 * 1024))
  expect(await discoveryFailure(huge.origin)).toContain(`larger than ${OAUTH_MAX_RESPONSE_BYTES} bytes`)
  const junk = started(serve(() => new Response('<html>login</html>')))
  expect(await discoveryFailure(junk.origin)).toContain('could not be read')
})

test('UserInfo: the access token does not follow a redirect to another origin', async () => {
  const elsewhere = started(serve(() => Response.json({ sub: 'user-1', email: 'a@example.com' })))
  const hop = started(redirectTo(`${elsewhere.origin}/me`, 307))
  const failure = await fetchUserinfo(`${hop.origin}/me`, 'access-token', 'user-1', http).catch((e) => e)
  expect(failure).toBeInstanceOf(ClaimsError)
  expect(failure.reason).toBe('userinfo_failed')
  expect(hop.requests[0]!.headers.authorization).toBe('Bearer access-token')
  expect(elsewhere.requests).toEqual([])
})
