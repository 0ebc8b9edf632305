import { Elysia } from 'elysia'
import type { sessionPlugin } from '../../plugins/session.ts'
import type { DashboardServices } from './services.ts'

// /organizations: the account's organizations and the domains in each (issue #8).

export function organizationPages(_s: DashboardServices, sessions: ReturnType<typeof sessionPlugin>) {
  return new Elysia({ name: 'dashboard:organizations' }).use(sessions)
}
