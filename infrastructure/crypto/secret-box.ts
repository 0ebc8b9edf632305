import { chmod, link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'

// Secrets the service must use again (webhook signing secrets, DNS provider credentials) are
// encrypted at rest with AES-256-GCM (Web Crypto). The key comes from SECRET_KEY (base64 or hex,
// 32 bytes); in embedded mode without one, a key is generated once into DATA_DIR with mode 0600.
// Sealed values are text: `v1.<base64url iv>.<base64url ciphertext+tag>`, so a future key
// rotation can add `v2` without touching stored rows.

export interface SecretBox {
  seal(plaintext: string, context: string): Promise<string>
  open(sealed: string, context: string): Promise<string>
}

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url')
const fromB64url = (text: string) => new Uint8Array(Buffer.from(text, 'base64url'))

/** SECRET_KEY as 32 bytes: 64 hex characters or base64 of 32 bytes. */
export function parseSecretKey(text: string): Uint8Array | null {
  const value = text.trim()
  if (/^[0-9a-fA-F]{64}$/.test(value)) return new Uint8Array(Buffer.from(value, 'hex'))
  // Base64 (RFC 4648 §4, or its URL-safe alphabet §5) of exactly 32 bytes: Buffer.from skips any
  // character outside the alphabet, so `!!AAAA…` passed as another key than the one written.
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) return null
  const bytes = Buffer.from(value, 'base64')
  return bytes.length === 32 ? new Uint8Array(bytes) : null
}

/** The embedded key file: read, or created once (exclusive create, 0600) when missing. */
export async function keyFromFile(path: string): Promise<Uint8Array> {
  try {
    const existing = parseSecretKey(await readFile(path, 'utf8'))
    if (existing === null) throw new Error(`${path} does not hold a 32-byte key`)
    return existing
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOENT') throw error
  }
  await mkdir(dirname(path), { recursive: true, mode: 0o700 })
  const key = crypto.getRandomValues(new Uint8Array(32))
  // Written whole to a private temporary file, then published with link(), which fails if the
  // name exists: a concurrent reader never sees a half-written key, and two racing processes
  // end up with the same one.
  const temporary = `${path}.${crypto.randomUUID()}.tmp`
  await writeFile(temporary, `${Buffer.from(key).toString('hex')}\n`, { flag: 'wx', mode: 0o600 })
  try {
    await chmod(temporary, 0o600)
    await link(temporary, path)
    return key
  } catch (error) {
    if ((error as { code?: string }).code === 'EEXIST') return keyFromFile(path)
    throw error
  } finally {
    await unlink(temporary)
  }
}

export async function secretBox(rawKey: Uint8Array): Promise<SecretBox> {
  if (rawKey.length !== 32) throw new Error('the secret key must be 32 bytes')
  const key = await crypto.subtle.importKey('raw', new Uint8Array(rawKey), 'AES-GCM', false, [
    'encrypt',
    'decrypt',
  ])
  // The context (e.g. "webhook:<account id>") is authenticated data: a sealed value copied to
  // another row does not open there.
  const aad = (context: string) => new TextEncoder().encode(context)
  return {
    async seal(plaintext, context) {
      const iv = crypto.getRandomValues(new Uint8Array(12))
      const sealed = await crypto.subtle.encrypt(
        { name: 'AES-GCM', iv, additionalData: aad(context) },
        key,
        new TextEncoder().encode(plaintext),
      )
      return `v1.${b64url(iv)}.${b64url(new Uint8Array(sealed))}`
    },
    async open(sealed, context) {
      const [version, iv, data] = sealed.split('.')
      if (version !== 'v1' || iv === undefined || data === undefined) throw new Error('not a sealed secret')
      const plain = await crypto.subtle.decrypt(
        { name: 'AES-GCM', iv: fromB64url(iv), additionalData: aad(context) },
        key,
        fromB64url(data),
      )
      return new TextDecoder().decode(plain)
    },
  }
}
