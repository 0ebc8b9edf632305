// C0 control characters and DEL: what single-line text refuses (the API's rule for text fields,
// plugins/input-schemas.ts SINGLE_LINE), for checks inside use cases that any caller may reach.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/

/**
 * The bidirectional embedding, override and isolate controls (LRE, RLE, PDF, LRO, RLO; LRI, RLI,
 * FSI, PDI), which single-line text refuses as well: they reorder how the text around them is
 * displayed, so a name can show as another (CVE-2021-42574, "Trojan Source"). Right-to-left text
 * itself needs none of them. The marks (LRM, RLM, ALM) only nudge neutral characters and stay.
 */
export const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/

/** The refusal message of BIDI_CONTROLS, naming the characters so a caller can find them. */
export const BIDI_CONTROLS_TEXT = 'bidirectional control characters (U+202A–U+202E, U+2066–U+2069)'

// White space, controls, format characters (U+200B zero-width space, U+2060 word joiner, U+FEFF,
// U+00AD soft hyphen, …), and the letters and symbols that are drawn blank (the Hangul fillers,
// U+2800 braille blank).
const INVISIBLE = /[\p{White_Space}\p{Cc}\p{Cf}\p{Z}\u115f\u1160\u3164\uffa0\u2800]/gu

/** Whether a name shows anything at all: one made only of invisible characters reads as blank. */
export const showsSomething = (text: string) => text.replace(INVISIBLE, '') !== ''

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it replaces
const UNSHOWABLE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

/**
 * Text from elsewhere (a provider's zone list) made safe to show and store: each C0 or C1 control,
 * DEL and bidirectional control becomes U+FFFD, as damaged report text does.
 */
export const showable = (text: string) => text.replace(UNSHOWABLE, '\ufffd')
