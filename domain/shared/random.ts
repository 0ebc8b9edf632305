// Randomness is a port: the core never reaches for a global generator.
export type RandomBytes = (length: number) => Uint8Array
