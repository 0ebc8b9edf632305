import { existsSync } from 'node:fs'
import { type Browser, chromium, type Page } from 'playwright-core'

// Debian's Chromium (apt package `chromium`, installed by .ci/run), driven by playwright-core.
// Never a browser download. Without it a browser test fails; it does not skip.

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
