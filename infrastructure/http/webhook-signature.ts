// docs/webhooks.md: `X-Webhook-Signature` is the lowercase hex HMAC-SHA256 of the raw body, keyed with the
// account's secret (the UTF-8 bytes of the whole `whsec_...` string). Web Crypto, so receivers on any
// modern runtime can run the same few lines (docs/webhooks.md).

const encoder = new TextEncoder()

function hmacKey(secret: string, usage: 'sign' | 'verify'): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    usage,
  ])
}

export async function signWebhook(secret: string, body: string): Promise<string> {
  const mac = new Uint8Array(
    await crypto.subtle.sign('HMAC', await hmacKey(secret, 'sign'), encoder.encode(body)),
  )
  return Array.from(mac, (byte) => byte.toString(16).padStart(2, '0')).join('')
}

const HEX_SHA256 = /^[0-9a-f]{64}$/i

/**
 * Whether `signature` is the body's HMAC under `secret`. subtle.verify compares in constant time, so
 * the time taken tells an attacker nothing about how many leading bytes of a forgery were right. A
 * malformed header is simply not a valid signature. Upper-case hex is accepted: it is the same MAC.
 */
export async function verifyWebhook(secret: string, body: string, signature: string): Promise<boolean> {
  if (!HEX_SHA256.test(signature)) return false
  const mac = Uint8Array.from(signature.match(/../g)!, (pair) => Number.parseInt(pair, 16))
  return crypto.subtle.verify('HMAC', await hmacKey(secret, 'verify'), mac, encoder.encode(body))
}
