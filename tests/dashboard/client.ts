import type { TestApp } from '../support/test-app.ts'

// A browser without a browser: one cookie jar over app.handle(), forms posted the way a browser
// posts them (urlencoded, with Origin), and the page's CSRF token read from its HTML.

export interface PageAnswer {
  status: number
  headers: Headers
  html: string
  location: string | null
  setCookies: string[]
}

export interface FormClient {
  jar: Map<string, string>
  get(path: string, headers?: Record<string, string>): Promise<PageAnswer>
  post(
    path: string,
    /** The form's fields, or its body as written (to send bytes URLSearchParams would re-encode). */
    fields: Record<string, string> | string,
    options?: { origin?: string | null; referer?: string; headers?: Record<string, string> },
  ): Promise<PageAnswer>
  /** GET `path`, read its `_csrf` and POST the form to `action` (default: the same path). */
  submit(path: string, fields: Record<string, string>, action?: string): Promise<PageAnswer>
  signUp(email: string, password?: string): Promise<PageAnswer>
  logIn(email: string, password?: string): Promise<PageAnswer>
  csrf(): Promise<string>
}

export const PASSWORD = 'correct horse battery staple'

export function csrfOf(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html)
  if (!match) throw new Error(`no CSRF field in:\n${html.slice(0, 500)}`)
  return match[1]!
}

export function formClient(t: TestApp, base = t.config.publicUrl): FormClient {
  const jar = new Map<string, string>()
  const origin = new URL(base).origin

  const send = async (method: string, path: string, body: string | undefined, headers: Headers) => {
    if (jar.size > 0) headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '))
    const response = await t.app.handle(new Request(`${base}${path}`, { method, headers, body }))
    const setCookies = response.headers.getSetCookie()
    for (const cookie of setCookies) {
      const [pair, ...attributes] = cookie.split(';')
      const eq = pair!.indexOf('=')
      const name = pair!.slice(0, eq).trim()
      const value = pair!.slice(eq + 1).trim()
      if (attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === '') jar.delete(name)
      else jar.set(name, value)
    }
    return {
      status: response.status,
      headers: response.headers,
      html: await response.text(),
      location: response.headers.get('location'),
      setCookies,
    }
  }

  const client: FormClient = {
    jar,
    get: (path, headers = {}) => send('GET', path, undefined, new Headers(headers)),
    post(path, fields, options = {}) {
      const headers = new Headers({ 'content-type': 'application/x-www-form-urlencoded', ...options.headers })
      const sentOrigin = options.origin === undefined ? origin : options.origin
      if (sentOrigin !== null) headers.set('origin', sentOrigin)
      if (options.referer) headers.set('referer', options.referer)
      const body = typeof fields === 'string' ? fields : new URLSearchParams(fields).toString()
      return send('POST', path, body, headers)
    },
    async submit(path, fields, action = path) {
      const page = await client.get(path)
      return client.post(action, { _csrf: csrfOf(page.html), ...fields })
    },
    signUp: (email, password = PASSWORD) => client.submit('/signup', { email, password }),
    logIn: (email, password = PASSWORD) => client.submit('/login', { email, password }),
    async csrf() {
      return csrfOf((await client.get('/settings/account')).html)
    },
  }
  return client
}

/** The Set-Cookie header of `name`, split into its attributes (lower-cased names). */
export function cookieAttributes(setCookies: string[], name: string): Record<string, string> | null {
  const cookie = setCookies.find((c) => c.startsWith(`${name}=`))
  if (cookie === undefined) return null
  const [pair, ...attributes] = cookie.split(';')
  const out: Record<string, string> = { value: pair!.slice(name.length + 1) }
  for (const attribute of attributes) {
    const [key, value = ''] = attribute.trim().split('=')
    out[key!.toLowerCase()] = value
  }
  return out
}
