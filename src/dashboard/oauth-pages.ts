import { Elysia } from 'elysia'
import type { DashboardServices } from './services.ts'

// OAuth 2.0 / OpenID Connect sign-in (issue #8): /login/oauth/:provider and its callback.

export function oauthPages(_s: DashboardServices) {
  return new Elysia({ name: 'dashboard:oauth' })
}
