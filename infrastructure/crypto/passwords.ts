import type { PasswordHasher } from '../../domain/accounts/password-login.ts'

/** argon2id through Bun.password (docs/dashboard.md), with Bun's default cost (64 MiB, 2 passes). */
export function bunPasswords(): PasswordHasher {
  // Verified against when no user matches, so an unknown email costs what a wrong password does.
  let dummy: Promise<string> | null = null
  return {
    hash: (password) => Bun.password.hash(password, { algorithm: 'argon2id' }),
    async verify(password, hash) {
      if (hash === null) {
        dummy ??= Bun.password.hash(crypto.randomUUID(), { algorithm: 'argon2id' })
        await Bun.password.verify(password, await dummy).catch(() => false)
        return false
      }
      // A hash in an unknown format (not argon2/bcrypt) matches nothing.
      return Bun.password.verify(password, hash).catch(() => false)
    },
  }
}
