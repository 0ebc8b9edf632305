// The one rule for an e-mail address the service takes: an account's e-mail (sign-up, OAuth),
// invitations and notification recipients, from the API, the dashboard and the CLI alike
// (docs/api.md, "Input rules"). The address is mailed, so it is what an SMTP server accepts in
// `RCPT TO` (RFC 5321 §4.1.2 Mailbox): a dot-atom local part and a domain of LDH labels. The
// pattern `x@y.z` used before took `<a@example.com>` (stored with its brackets), `a..b@example.com`
// and `a@-example.com` (found by a hostile-input sweep).
//
// Left out on purpose: quoted local parts (`"a b"@example.com`) and address literals
// (`a@[192.0.2.1]`), which no member or recipient needs and few mail systems deliver, and
// internationalised addresses (RFC 6531), which need SMTPUTF8 from every relay on the way.

/** RFC 5321 §4.5.3.1.3: a path is at most 256 octets, so an address without `<` `>` at most 254. */
export const MAX_EMAIL_LENGTH = 254
/** RFC 5321 §4.5.3.1.1. */
const MAX_LOCAL_PART_LENGTH = 64

/** One atom of a dot-atom (RFC 5322 §3.2.3 atext): letters, digits and these symbols. */
const ATOM = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+$/i
/** RFC 1035 §2.3.1 as relaxed by RFC 1123 §2.1: letters, digits and inner hyphens, 1-63 long. */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i

/** `a.b.c`: atoms joined by single dots, none at either end (`.a`, `a.`, `a..b` are not). */
function isDotAtom(local: string): boolean {
  return local.length <= MAX_LOCAL_PART_LENGTH && local.split('.').every((atom) => ATOM.test(atom))
}

/**
 * Two or more labels. The last is not all digits, so `192.0.2.1` is no domain (RFC 3696 §2): an
 * address literal would need brackets, which LABEL refuses.
 */
function isMailDomain(domain: string): boolean {
  const labels = domain.split('.')
  return labels.length >= 2 && labels.every((label) => LABEL.test(label)) && !/^\d+$/.test(labels.at(-1)!)
}

/**
 * The address as stored and compared: trimmed and lower-cased (accounts, members and recipients are
 * compared that way), or null when it is no mailbox under the rule above. Judged before lower-casing,
 * which would turn a non-ASCII letter into an ASCII one (the Kelvin sign U+212A into `k`).
 */
export function normalizeEmail(raw: string): string | null {
  const value = raw.trim()
  if (value.length > MAX_EMAIL_LENGTH) return null
  const at = value.lastIndexOf('@')
  if (at < 0) return null
  return isDotAtom(value.slice(0, at)) && isMailDomain(value.slice(at + 1)) ? value.toLowerCase() : null
}

/**
 * The spelling an existing account is looked up by (sign-in, password reset, login links, tokens):
 * trimmed and lower-cased as stored, but not judged by the rule above, so an account whose address
 * a looser rule took before can still sign in. Null past MAX_EMAIL_LENGTH: no account has it.
 */
export function emailLookupKey(raw: string): string | null {
  const value = raw.trim().toLowerCase()
  return value === '' || value.length > MAX_EMAIL_LENGTH ? null : value
}
