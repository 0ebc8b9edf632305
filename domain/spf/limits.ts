// RFC 7208 §4.6.4 processing limits.

/** DNS-querying terms (include, a, mx, ptr, exists, redirect) per evaluation; a %{p} macro is not one. */
export const MAX_DNS_TERMS = 10
/** Lookups that are NXDOMAIN or empty, the PTR query of a %{p} macro included. */
export const MAX_VOID_LOOKUPS = 2
/** MX records for one mx mechanism; more is a permerror. */
export const MAX_MX_RECORDS = 10
/** PTR names considered for one ptr mechanism or %{p} macro; the rest are ignored. */
export const MAX_PTR_NAMES = 10
