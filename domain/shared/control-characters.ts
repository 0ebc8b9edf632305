// C0 control characters and DEL: what single-line text refuses (the API's rule for text fields,
// plugins/input-schemas.ts SINGLE_LINE), for checks inside use cases that any caller may reach.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/
