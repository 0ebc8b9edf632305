import { type JWTVerifyGetKey, errors as joseErrors, jwtVerify } from 'jose'
import { sameSecret } from '../../domain/accounts/sessions.ts'
import type { HttpClient } from '../http/guarded-client.ts'

// ID token validation (OpenID Connect Core §3.1.3.7) with jose: the signature against the issuer's
// published keys (JWKS, fetched and cached by jose's remote key set, which refetches once when a
// token names an unknown key: key rotation), the issuer, the audience (and `azp`), the expiry, and
// the nonce of this browser's request (§15.5.2: it binds the token to the flow the browser began).

export type ClaimsFailure = 'id_token_invalid' | 'nonce_mismatch' | 'userinfo_failed'

export class ClaimsError extends Error {
  constructor(
    readonly reason: ClaimsFailure,
    message: string,
  ) {
    super(message)
    this.name = 'ClaimsError'
  }
}

// Asymmetric algorithms only: `none` and HS* (keyed by the client secret) are never accepted.
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']

/** Clock skew allowed between this service and the provider. */
const CLOCK_TOLERANCE_S = 60

export async function verifyIdToken(input: {
  idToken: string
  keys: JWTVerifyGetKey
  clientId: string
  issuer: string
  issuerAccepts: (iss: string, expected: string, payload: Record<string, unknown>) => boolean
  nonce: string
  /** False for providers whose ID tokens carry no nonce (LinkedIn): then one present must still match. */
  nonceEchoed: boolean
  now: Date
}): Promise<Record<string, unknown>> {
  let payload: Record<string, unknown>
  try {
    const verified = await jwtVerify(input.idToken, input.keys, {
      audience: input.clientId,
      algorithms: ALGORITHMS,
      currentDate: input.now,
      clockTolerance: CLOCK_TOLERANCE_S,
      requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
    })
    payload = verified.payload as Record<string, unknown>
  } catch (error) {
    const detail = error instanceof joseErrors.JOSEError ? `${error.code}: ${error.message}` : String(error)
    throw new ClaimsError('id_token_invalid', `the ID token was refused (${detail})`)
  }
  if (typeof payload.iss !== 'string' || !input.issuerAccepts(payload.iss, input.issuer, payload))
    throw new ClaimsError(
      'id_token_invalid',
      `the ID token's issuer ${String(payload.iss)} is not ${input.issuer}`,
    )
  // §3.1.3.7 (4, 5): several audiences need an authorized party, and it must be this client.
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud]
  if ((audiences.length > 1 || payload.azp !== undefined) && payload.azp !== input.clientId)
    throw new ClaimsError('id_token_invalid', 'the ID token was issued to another party (azp)')
  if (typeof payload.sub !== 'string' || payload.sub === '' || payload.sub.length > 255)
    throw new ClaimsError('id_token_invalid', 'the ID token has no usable subject')
  if (typeof payload.nonce === 'string') {
    if (!sameSecret(payload.nonce, input.nonce))
      throw new ClaimsError('nonce_mismatch', 'the ID token carries the nonce of another request')
  } else if (input.nonceEchoed) {
    throw new ClaimsError('nonce_mismatch', 'the ID token carries no nonce')
  }
  return payload
}

/**
 * The UserInfo claims (§5.3), for the email and its verification when the ID token leaves them
 * out. §5.3.2: the response's `sub` must be the ID token's, or the claims are someone else's.
 */
export async function fetchUserinfo(
  url: string,
  accessToken: string,
  subject: string,
  http: HttpClient,
): Promise<Record<string, unknown>> {
  let body: unknown
  try {
    // The access token is for this endpoint only: no redirect is followed (guarded-client.ts).
    const response = await http.request(url, {
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
      redirect: 'error',
    })
    if (response.status !== 200) throw new Error(`it answered ${response.status}`)
    body = response.json()
  } catch (error) {
    throw new ClaimsError(
      'userinfo_failed',
      `the UserInfo endpoint could not be read (${(error as Error).message})`,
    )
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new ClaimsError('userinfo_failed', 'the UserInfo answer is not a JSON object')
  const claims = body as Record<string, unknown>
  if (claims.sub !== subject)
    throw new ClaimsError('userinfo_failed', 'the UserInfo answer is about another subject')
  return claims
}
