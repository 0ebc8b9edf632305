import { t } from 'elysia'

// Request-schema constructors with the bounds every input carries (docs/api.md, "Input rules"):
// integers bounded to what their column holds, text bounded in length and single-line. Request
// models use these instead of bare `t.Integer()` / `t.String()`; tests/api/input-sweep.test.ts
// refuses an unbounded integer or string in any request schema of the OpenAPI document.

/** PostgreSQL `integer` (organization ids, SPF versions). */
export const MAX_INT4 = 2_147_483_647
/** `bigint` ids held as JS numbers: exact up to 2^53 - 1, so nothing above is an id we issued. */
export const MAX_ROW_ID = Number.MAX_SAFE_INTEGER
/** With at most 100 per page, the last reachable row is the 100 millionth. */
export const MAX_PAGE = 1_000_000
/** A domain name in presentation form: 253 octets plus a trailing dot (RFC 1035 §2.3.4). */
export const MAX_DOMAIN_LENGTH = 254

/**
 * No C0 control character (U+0000–U+001F, TAB/LF/CR included) and no DEL. The global input guard
 * (plugins/input-guard.ts) refuses the others in every value; single-line fields refuse all of them.
 */
export const SINGLE_LINE = '^[^\\u0000-\\u001F\\u007F]*$'

type Described = { description?: string; examples?: unknown[] }

/** An integer primary key of an `integer` column. */
export const Int4Id = (options: Described = {}) => t.Integer({ minimum: 1, maximum: MAX_INT4, ...options })

/** An integer primary key of a `bigint` column. */
export const RowId = (options: Described = {}) => t.Integer({ minimum: 1, maximum: MAX_ROW_ID, ...options })

/** Single-line text of at most `maxLength` characters. */
export const Line = (options: Described & { maxLength: number; minLength?: number; format?: string }) =>
  t.String({ ...options, pattern: SINGLE_LINE })

/** A domain name as typed (Unicode or A-labels); the use case normalises and judges it. */
export const DomainText = (options: Described = {}) => Line({ maxLength: MAX_DOMAIN_LENGTH, ...options })

/** An identifier given as text (a UUID, an embed key, a connection id or kind). */
export const IdText = (options: Described = {}) => Line({ maxLength: 100, ...options })

/** An IP address in any spelling (the longest IPv6 form with an embedded IPv4 is 45 characters). */
export const IpText = (options: Described = {}) => Line({ maxLength: 64, ...options })
