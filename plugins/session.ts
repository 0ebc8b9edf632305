import { Elysia } from 'elysia'
import {
  type ActiveSession,
  resumeSession,
  type SessionStore,
  sameSecret,
} from '../domain/accounts/sessions.ts'

// Dashboard sessions and CSRF (docs/dashboard.md).
// `{ session: true }` resolves the session cookie to the signed-in user or redirects to
// `/login?next=…`; `{ csrf: true }` guards a state-changing request of a signed-in user: the form
// field `_csrf` (or the `X-CSRF-Token` header) must equal the session's token, and Origin (else
// Referer) must be the service's own origin. `{ anonymousCsrf: true }` does the same for the forms
// used before login (login, sign-up, password reset) against a pre-session cookie (double submit).

export interface SessionPluginDeps {
  sessions: Pick<SessionStore, 'find' | 'touch' | 'delete'>
  now: () => Date
  publicUrl: string
  /** The answer to a refused state-changing request (a 403 page). */
  forbidden: (request: Request) => Response
}

export interface SessionCookies {
  secure: boolean
  sessionName: string
  csrfName: string
  read(request: Request, name: string): string | null
  session(id: string, expiresAt: Date, now: Date): string
  csrf(value: string): string
  clear(name: string): string
}

/**
 * Secure everywhere but plain-http localhost development (docs/dashboard.md). A secure cookie takes the
 * `__Host-` prefix: the browser then refuses it unless Secure, on path `/` and without a Domain,
 * so a sibling subdomain cannot plant one.
 */
export function sessionCookies(publicUrl: string): SessionCookies {
  const url = new URL(publicUrl)
  const local = url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)
  const secure = !local
  const prefix = secure ? '__Host-' : ''
  const attributes = `Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`
  return {
    secure,
    sessionName: `${prefix}dw_session`,
    csrfName: `${prefix}dw_csrf`,
    read(request, name) {
      const header = request.headers.get('cookie')
      if (header === null) return null
      for (const part of header.split(';')) {
        const eq = part.indexOf('=')
        if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
      }
      return null
    },
    session(id, expiresAt, now) {
      const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - now.getTime()) / 1000))
      return `${prefix}dw_session=${id}; Max-Age=${maxAge}; ${attributes}`
    },
    // The pre-session token lives as long as the browser session: only the login and sign-up forms use it.
    csrf: (value) => `${prefix}dw_csrf=${value}; ${attributes}`,
    clear: (name) => `${name}=; Max-Age=0; ${attributes}`,
  }
}

/** A form body: the body parser hands non-JSON bodies over as text, multipart ones as FormData. */
export function formOf(body: unknown): URLSearchParams {
  if (body instanceof FormData) {
    const fields = new URLSearchParams()
    for (const [name, value] of body) if (typeof value === 'string') fields.append(name, value)
    return fields
  }
  return new URLSearchParams(typeof body === 'string' ? body : '')
}

/**
 * `next` after login, only if it is a path on this origin: `//evil.example`, `/\evil.example`,
 * `https://…`, control characters and paths whose dot segments resolve to `//…` are refused
 * (open-redirect safe).
 */
export function safeNext(next: string | null | undefined, fallback = '/domains'): string {
  if (typeof next !== 'string' || !next.startsWith('/') || next.startsWith('//')) return fallback
  // Backslashes (browsers read `/\host` as `//host`) and control characters (`/\t/host`).
  for (const char of next) {
    const code = char.charCodeAt(0)
    if (char === '\\' || code < 0x20 || code === 0x7f) return fallback
  }
  try {
    const base = 'http://dashboard.invalid'
    const url = new URL(next, base)
    if (url.origin !== base) return fallback
    // Checked again once resolved: dot segments can make `//host` of a path that did not start so
    // (`/.//evil.example`, `/x/..//evil.example`), which a browser then reads as another site.
    const path = `${url.pathname}${url.search}${url.hash}`
    return path.startsWith('//') || path.startsWith('/\\') ? fallback : path
  } catch {
    return fallback
  }
}

/** The Origin a request names (maybe `null`, an opaque one), else its Referer's; null without either. */
export function requestOrigin(request: Request): string | null {
  const origin = request.headers.get('origin')
  if (origin !== null) return origin
  const referer = request.headers.get('referer')
  return referer !== null && URL.canParse(referer) ? new URL(referer).origin : null
}

/** Origin, else the origin of Referer, must be the service's own; a request with neither is refused. */
export function fromOwnOrigin(request: Request, publicUrl: string): boolean {
  return requestOrigin(request) === new URL(publicUrl).origin
}

/** Where a logged-out visitor goes: back to the page they asked for after login (GET only). */
export function loginLocation(request: Request): string {
  if (request.method !== 'GET' && request.method !== 'HEAD') return '/login'
  const url = new URL(request.url)
  const next = `${url.pathname}${url.search}`
  return next === '/' || next === '/domains' ? '/login' : `/login?next=${encodeURIComponent(next)}`
}

export function sessionPlugin(deps: SessionPluginDeps) {
  const cookies = sessionCookies(deps.publicUrl)
  const resolved = new WeakMap<Request, ActiveSession>()
  const checked = (request: Request, body: unknown, expected: string | null) => {
    if (!fromOwnOrigin(request, deps.publicUrl)) return false
    const sent = formOf(body).get('_csrf') ?? request.headers.get('x-csrf-token')
    return sent !== null && expected !== null && expected !== '' && sameSecret(sent, expected)
  }
  return new Elysia({ name: 'dashboard-session' }).macro({
    session: {
      async resolve({ request, set, status }) {
        const now = deps.now()
        const id = cookies.read(request, cookies.sessionName)
        const found = await resumeSession(deps, { id, now })
        if (found === null) {
          set.headers.location = loginLocation(request)
          set.headers['cache-control'] = 'no-store'
          if (id !== null) set.headers['set-cookie'] = cookies.clear(cookies.sessionName)
          return status(303, '')
        }
        // Sliding expiry: the cookie's lifetime follows the session's whenever it moves.
        if (found.renewed) set.headers['set-cookie'] = cookies.session(id!, found.session.expiresAt, now)
        resolved.set(request, found.session)
        return { session: found.session }
      },
    },
    csrf: {
      // Declared after `session` on a route, so the session is resolved by now; without one the
      // request is refused (never checked against the pre-session cookie).
      beforeHandle({ request, body }) {
        if (!checked(request, body, resolved.get(request)?.csrfToken ?? null)) return deps.forbidden(request)
      },
    },
    anonymousCsrf: {
      beforeHandle({ request, body }) {
        if (!checked(request, body, cookies.read(request, cookies.csrfName))) return deps.forbidden(request)
      },
    },
  })
}
