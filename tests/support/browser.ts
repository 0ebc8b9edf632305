import { expect } from 'bun:test'
import { existsSync, mkdirSync } from 'node:fs'
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core'
import { startTestApp, type TestApp } from './test-app.ts'

// Debian's Chromium (apt package `chromium`, installed by .ci/run), driven by playwright-core.
// Never a browser download. Without it a browser test fails; it does not skip. Here too what every
// browser test sets up: the app on a real port, and a browser whose tabs record what must not happen.

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium'

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is required at ${CHROMIUM} (apt-get install chromium); .ci/run installs it`)
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
}

/** Every visible form control has a label, the page one h1, the html a lang; the script ran. */
export async function checkAccessible(page: Page): Promise<void> {
  const report = await page.evaluate(() => ({
    unlabelled: [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
      .filter((el) => (el as HTMLInputElement).labels?.length === 0 && !el.getAttribute('aria-label'))
      .map((el) => el.outerHTML),
    h1: document.querySelectorAll('h1').length,
    lang: document.documentElement.lang,
    script: document.documentElement.classList.contains('js'),
  }))
  expect(report).toEqual({ unlabelled: [], h1: 1, lang: 'en', script: true })
}

/** Signs up through the form, which answers with the (empty) domains page. */
export async function signUp(page: Page, base: string, email: string, password: string): Promise<void> {
  await page.goto(`${base}/signup`)
  await page.getByLabel('Email address').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign up' }).click()
  await page.waitForURL(`${base}/domains`)
}

export const ARTIFACTS = new URL('../artifacts/', import.meta.url).pathname

/**
 * Records what a page must never do: requests off `origins` (no CDN, works offline), failed
 * requests, console errors (CSP violations are reported there) and uncaught script errors. The
 * 4xx answers a test asks for on purpose are logged as console errors too and left out.
 */
export function recordProblems(page: Page, origins: string[], problems: string[]): Page {
  page.on('requestfailed', (request) => problems.push(`failed: ${request.url()}`))
  page.on('request', (request) => {
    const url = request.url()
    if (!url.startsWith('data:') && !origins.some((origin) => url.startsWith(origin)))
      problems.push(`external: ${url}`)
  })
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 4\d\d/.test(message.text()))
      problems.push(`console: ${message.text()}`)
  })
  page.on('pageerror', (error) => problems.push(`script: ${error.message}`))
  return page
}

type Env = Record<string, string>

export interface ServedApp {
  t: TestApp
  /** The app's origin, http://127.0.0.1:{port}; PUBLIC_URL names it. */
  base: string
  close(): Promise<void>
}

/**
 * The whole app served on a loopback port. The port comes first: PUBLIC_URL (the origin the CSRF
 * check expects) must name it, so `env` may be a function of that origin (an OpenID provider's
 * redirect URI names it too).
 */
export async function servedApp(
  env: Env | ((base: string) => Env | Promise<Env>) = {},
  options: Parameters<typeof startTestApp>[1] = {},
): Promise<ServedApp> {
  let app: TestApp | undefined
  const service = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => app!.app.handle(request) })
  const base = `http://127.0.0.1:${service.port}`
  try {
    const settings = typeof env === 'function' ? await env(base) : env
    app = await startTestApp({ ...settings, PUBLIC_URL: base }, options)
  } catch (error) {
    service.stop(true)
    throw error
  }
  const t = app
  return {
    t,
    base,
    close: async () => {
      service.stop(true)
      await t.close()
    },
  }
}

export interface BrowserSession {
  browser: Browser
  /** The context tabs open in unless given another (a second user needs their own cookies). */
  context: BrowserContext
  /** What the session's tabs recorded (see recordProblems); a test expects it empty. */
  problems: string[]
  /** A new tab that records problems, with `origins` the only ones it may reach. */
  tab(origins: string[], context?: BrowserContext): Promise<Page>
  close(): Promise<void>
}

/** Chromium, one context (Playwright's default viewport unless given) and the artifacts folder. */
export async function browserSession(
  options: { viewport?: { width: number; height: number } } = {},
): Promise<BrowserSession> {
  const browser = await launchBrowser()
  const context = await browser.newContext(options.viewport ? { viewport: options.viewport } : {})
  mkdirSync(ARTIFACTS, { recursive: true })
  const problems: string[] = []
  return {
    browser,
    context,
    problems,
    tab: async (origins, on = context) => recordProblems(await on.newPage(), origins, problems),
    close: () => browser.close(),
  }
}
