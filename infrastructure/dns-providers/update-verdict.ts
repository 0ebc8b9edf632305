// What the answer to a TSIG-signed UPDATE or query means for the DNS provider port: the RCODE
// (RFC 2136 §2.2, RFC 1035 §4.1.1) read together with whether the answer carried a valid signature.

import type { ProviderError, ProviderResult } from '../../domain/dns-providers/ports.ts'
import { providerOk } from '../../domain/dns-providers/ports.ts'
import type { TsigCheck } from './tsig.ts'

const RCODE_NAMES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'].concat([
  'YXDOMAIN',
  'YXRRSET',
  'NXRRSET',
  'NOTAUTH',
  'NOTZONE',
])
// RFC 2136 §2.2 RCODEs of an UPDATE answer, as the port's errors.
const RCODE_ERRORS: Record<number, ProviderError['kind']> = {
  1: 'invalid', // FORMERR
  2: 'unavailable', // SERVFAIL
  3: 'not_found', // NXDOMAIN: a "name is in use" prerequisite failed
  4: 'forbidden', // NOTIMP: the server does not accept UPDATE here
  5: 'forbidden', // REFUSED: policy (the key may not update this zone or name)
  6: 'conflict', // YXDOMAIN
  7: 'conflict', // YXRRSET: an "RRset does not exist" prerequisite failed
  8: 'not_found', // NXRRSET
  10: 'invalid', // NOTZONE: a name outside the zone
}

export const rcodeName = (rcode: number) => RCODE_NAMES[rcode] ?? `RCODE ${rcode}`

export const fail = (kind: ProviderError['kind'], message: string) => ({
  ok: false as const,
  failure: { kind, message },
})

/**
 * What an answer means. A server that verified our TSIG signs its answer, errors included (RFC 8945
 * §5.3), so:
 * - a TSIG error from the server (BADKEY, BADSIG, BADTIME; RFC 8945 §5.2), or a NOTAUTH or REFUSED
 *   it did not sign, means it could not verify us: wrong key name or secret, or clocks further apart
 *   than the fudge. BIND and Knot answer NOTAUTH with a TSIG error; PowerDNS an unsigned REFUSED
 *   (following RFC 3007 for updates) or NOTAUTH (for queries). Knot also answers BADKEY for a key
 *   it knows but whose ACL does not allow the action, so there that is bad_credentials too; and
 *   it answers a zone it does not serve with an unsigned NOTAUTH, which rfc2136.ts tells apart
 *   with an SOA query;
 * - a signed NOTAUTH means the key is fine but the server is not authoritative for the zone
 *   (RFC 2136 §3.1.1), a signed REFUSED that the key may not do this;
 * - a NOERROR that fails our own verification is not believed at all (RFC 8945 §5.4).
 */
export function interpret(rcode: number, check: TsigCheck, what: string): ProviderResult<void> {
  const trusted = check.status === 'verified'
  if (check.status === 'failed' && check.serverError) {
    return fail('bad_credentials', `${what}: the server rejected the TSIG key (${check.error})`)
  }
  if ((rcode === 9 || rcode === 5) && !trusted) {
    return fail(
      'bad_credentials',
      `${what}: the server did not accept the TSIG signature (${rcodeName(rcode)}): wrong key name or secret, or clock skew`,
    )
  }
  if (rcode === 9) return fail('not_found', `${what}: the server is not authoritative for the zone (NOTAUTH)`)
  if (rcode !== 0)
    return fail(RCODE_ERRORS[rcode] ?? 'unavailable', `${what}: the server answered ${rcodeName(rcode)}`)
  if (!trusted) {
    const detail = check.status === 'unsigned' ? 'it is unsigned' : check.error
    return fail('unavailable', `${what}: the answer failed TSIG verification (${detail})`)
  }
  return providerOk(undefined)
}
