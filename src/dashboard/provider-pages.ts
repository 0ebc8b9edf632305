import { Elysia } from 'elysia'
import type { sessionPlugin } from '../../plugins/session.ts'
import type { DashboardServices } from './services.ts'

// /dns-providers: connect a DNS provider, import its zones with live progress (issue #7, #8).

export function providerPages(_s: DashboardServices, sessions: ReturnType<typeof sessionPlugin>) {
  return new Elysia({ name: 'dashboard:dns-providers' }).use(sessions)
}
