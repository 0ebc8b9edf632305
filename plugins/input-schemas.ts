import { FormatRegistry } from '@sinclair/typebox'
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
 * No C0 control character (U+0000–U+001F, TAB/LF/CR included), no DEL, and no bidirectional
 * embedding, override or isolate control (U+202A–U+202E, U+2066–U+2069: they make text display as
 * other text, domain/shared/control-characters.ts BIDI_CONTROLS). The global input guard
 * (plugins/input-guard.ts) refuses the C0 controls in every value; single-line fields refuse all of these.
 */
export const SINGLE_LINE = '^[^\\u0000-\\u001F\\u007F\\u202A-\\u202E\\u2066-\\u2069]*$'

/**
 * Elysia's `t.Integer` (so Int4Id, RowId and every integer of a request model) also takes text that
 * passes the `integer` string format, and reads it with Number(). Elysia's own format passes any
 * text that Number() reads as a whole number, so `"0x1"`, `" 1 "` and `"1.0"` in a JSON body were
 * organization 1 (found by a hostile-input sweep). Numeric text stays accepted (docs/api.md, "Input
 * rules") but only in decimal digits, as a query or a path writes numbers (plugins/input-rules.ts).
 * Replaces Elysia's format, whichever module registers first (Elysia only sets one not yet set).
 */
const DECIMAL_INTEGER = /^-?\d+$/
FormatRegistry.Set('integer', (value) => DECIMAL_INTEGER.test(value))

type Described = { description?: string; examples?: unknown[] }

/** An integer primary key of an `integer` column. */
export const Int4Id = (options: Described = {}) => t.Integer({ minimum: 1, maximum: MAX_INT4, ...options })

/** An integer primary key of a `bigint` column. */
export const RowId = (options: Described = {}) => t.Integer({ minimum: 1, maximum: MAX_ROW_ID, ...options })

/** Single-line text of at most `maxLength` characters (SINGLE_LINE). */
export const Line = (options: Described & { maxLength: number; minLength?: number; format?: string }) =>
  t.String({ ...options, pattern: SINGLE_LINE })

/** A domain name as typed (Unicode or A-labels); the use case normalises and judges it. */
export const DomainText = (options: Described = {}) => Line({ maxLength: MAX_DOMAIN_LENGTH, ...options })

/** An identifier given as text (a UUID, an embed key, a connection id or kind). */
export const IdText = (options: Described = {}) => Line({ maxLength: 100, ...options })

/** An IP address in any spelling (the longest IPv6 form with an embedded IPv4 is 45 characters). */
export const IpText = (options: Described = {}) => Line({ maxLength: 64, ...options })
