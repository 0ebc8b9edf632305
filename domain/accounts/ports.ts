export interface TokenRecord {
  id: string
  accountId: string
  userId: string
  name: string
  hint: string
  expiresAt: Date | null
  revokedAt: Date | null
  lastUsedAt: Date | null
  createdAt: Date
}

export interface TokenStore {
  /**
   * Finds a token by hash and, in the same round trip, records `last_used_at` for a live token
   * (at most once a minute per token, so the hot path does not write on every request).
   */
  findForAuth(hash: string, now: Date): Promise<TokenRecord | null>
  insert(token: {
    accountId: string
    userId: string
    name: string
    hash: string
    hint: string
    expiresAt: Date | null
  }): Promise<TokenRecord>
  /** Scoped by account; returns null when the token is not in the account. */
  revoke(accountId: string, tokenId: string, now: Date): Promise<TokenRecord | null>
  list(accountId: string): Promise<TokenRecord[]>
  findByHash(hash: string): Promise<TokenRecord | null>
}

export interface UserMembership {
  userId: string
  accountId: string
  email: string
}

export interface AccountStore {
  /** Creates an account with its first user as owner; `email_taken` when the email is in use. */
  createWithOwner(input: {
    email: string
    passwordHash: string | null
    ingestKey: string
  }): Promise<{ accountId: string; userId: string; ingestKey: string } | 'email_taken'>
  findMembershipByEmail(email: string): Promise<UserMembership | null>
  ingestKeyOf(accountId: string): Promise<string | null>
}
