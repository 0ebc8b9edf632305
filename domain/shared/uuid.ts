// Row ids that are UUIDs: a value that is not one names no row, and is answered as such before any
// query, rather than as a database error on the cast to uuid.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether `text` is a UUID in its usual spelling (any case). */
export const isUuid = (text: string): boolean => UUID.test(text)
