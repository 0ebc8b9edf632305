import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'

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
