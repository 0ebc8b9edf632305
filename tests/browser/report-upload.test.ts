import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import type { BrowserSession, ServedApp } from '../support/browser.ts'
import { ARTIFACTS, browserSession, checkAccessible, servedApp, signUp } from '../support/browser.ts'

// Upload reports in Debian's Chromium: several real report files chosen at once go up one by one
// (assets/upload.js), each row with a progress bar first and its result after; the summary counts them;
// nothing breaks the CSP or reaches off the service. Screenshots go to tests/artifacts/.

const AGG = 'tests/fixtures/dmarc-aggregate'
const PASSWORD = 'correct horse battery staple'
const email = `browser-upload-${Math.random().toString(36).slice(2, 8)}@example.com`

let served: ServedApp
let chromium: BrowserSession

beforeAll(async () => {
  served = await servedApp({}, { queue: true })
  chromium = await browserSession({ viewport: { width: 1280, height: 900 } })
}, 60_000)

afterAll(async () => {
  await chromium?.close()
  await served?.close()
})

test('many files at once: a progress bar per file, then its result, and the summary', async () => {
  const { base, t } = served
  const page = await chromium.tab([base])
  await signUp(page, base, email, PASSWORD)
  await page.goto(`${base}/domains`)
  await page.getByLabel('Domain').fill('example.com')
  await page.getByRole('button', { name: 'Add domain' }).click()
  await page.waitForURL(`${base}/domains/example.com?added=1`)
  await t.db.database.db.execute(sql`update domains set verified_at = now() where name = 'example.com'`)

  await page.goto(`${base}/reports`)
  await page.getByRole('link', { name: 'Upload reports' }).click()
  await page.waitForURL(`${base}/reports/upload`)
  expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Upload reports')
  await checkAccessible(page)

  // Requests are held until the rows are seen, so the in-between state can be looked at.
  let release = () => {}
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  let posts = 0
  await page.route(`${base}/reports/upload`, async (route) => {
    if (route.request().method() === 'POST') {
      posts++
      await held
    }
    await route.continue()
  })

  // Playwright takes paths or buffers, not both: every file as a buffer.
  const buffer = async (path: string) => ({
    name: path.split('/').pop()!,
    mimeType: 'application/octet-stream',
    buffer: Buffer.from(await Bun.file(path).arrayBuffer()),
  })
  await page
    .getByLabel('Files')
    .setInputFiles([
      await buffer(`${AGG}/parsedmarc/extract_report/nice-input.xml.gz`),
      await buffer(`${AGG}/parsedmarc/extract_report/nice-input.xml`),
      await buffer(
        `${AGG}/parsedmarc/aggregate/fastmail.com!example.com!1516060800!1516147199!102675056.xml.gz`,
      ),
      { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('my notes about DMARC') },
    ])
  await page.getByRole('button', { name: 'Upload' }).click()
  const rows = page.locator('#upload-rows tr')
  await page.locator('#upload-rows tr progress').nth(3).waitFor()
  expect(await rows.count()).toBe(4)
  expect(await page.locator('#upload-rows progress').count()).toBe(4)
  expect(await rows.first().locator('.badge').textContent()).toBe('uploading')
  expect(await rows.nth(1).locator('.badge').textContent()).toBe('waiting')
  expect(await page.locator('#upload-summary').textContent()).toBe(
    'Uploading 1 of 4: 0 stored, 0 duplicate, 0 quarantined',
  )
  expect(await page.getByRole('button', { name: 'Upload' }).isDisabled()).toBe(true)
  await page.screenshot({ path: `${ARTIFACTS}report-upload-progress.png`, fullPage: true })
  release()

  const summary = page.locator('#upload-summary')
  await page.waitForFunction(() =>
    document.getElementById('upload-summary')?.textContent?.startsWith('4 files'),
  )
  expect(await summary.textContent()).toBe(
    '4 files, 4 items: 1 stored, 1 duplicate, 1 quarantined, 1 skipped',
  )
  expect(posts).toBe(4) // one request per file
  const result = async (i: number) => ({
    name: await rows.nth(i).locator('th').textContent(),
    status: await rows.nth(i).locator('.badge').textContent(),
    detail: await rows.nth(i).locator('td').nth(1).textContent(),
  })
  expect(await result(0)).toEqual({
    name: 'nice-input.xml.gz',
    status: 'stored',
    detail: expect.stringContaining('report 11038226378739404135'),
  })
  expect(await result(1)).toMatchObject({ name: 'nice-input.xml', status: 'duplicate' })
  expect(await result(2)).toEqual({
    name: 'fastmail.com!example.com!1516060800!1516147199!102675056.xml.gz',
    status: 'quarantined',
    detail: expect.stringContaining('domain_not_in_account'),
  })
  expect(await rows.nth(2).getByRole('link', { name: 'Quarantine' }).getAttribute('href')).toBe(
    '/reports/quarantine',
  )
  expect(await result(3)).toEqual({
    name: 'notes.txt',
    status: 'skipped',
    detail: 'not a report file, an email or an mbox',
  })
  expect(await page.locator('#upload-rows progress').count()).toBe(0)
  expect(await page.getByRole('button', { name: 'Upload' }).isDisabled()).toBe(false)
  await page.screenshot({ path: `${ARTIFACTS}report-upload-done.png`, fullPage: true })

  // The stored report is there to see.
  await page.goto(`${base}/reports/quarantine`)
  expect(await page.locator('main').textContent()).toContain('domain_not_in_account')
  expect(chromium.problems).toEqual([])
}, 60_000)
