import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { rowsOf } from '../../infrastructure/db/database.ts'
import { startTestApp, type TestApp } from '../support/test-app.ts'
import { csrfOf, type FormClient, formClient } from './client.ts'

// /reports/upload: many report files in one multipart form (no script), or one per request asking
// for JSON (assets/upload.js); session and CSRF like every dashboard form; binary files arrive intact.

const AGG = 'tests/fixtures/dmarc-aggregate/parsedmarc'
let t: TestApp
let client: FormClient
let email: string

const file = async (path: string, name: string) => new File([await Bun.file(path).arrayBuffer()], name)

async function upload(
  files: File[],
  options: { csrf?: string | null; origin?: string; json?: boolean; who?: FormClient } = {},
) {
  const who = options.who ?? client
  const form = new FormData()
  const token = options.csrf === undefined ? csrfOf((await who.get('/reports/upload')).html) : options.csrf
  if (token !== null) form.append('_csrf', token)
  for (const f of files) form.append('files', f, f.name)
  const headers = new Headers({ origin: options.origin ?? new URL(t.config.publicUrl).origin })
  if (who.jar.size > 0) headers.set('cookie', [...who.jar].map(([k, v]) => `${k}=${v}`).join('; '))
  if (options.json) headers.set('accept', 'application/json')
  const response = await t.app.handle(
    new Request(`${t.config.publicUrl}/reports/upload`, { method: 'POST', headers, body: form }),
  )
  return { status: response.status, headers: response.headers, text: await response.text() }
}

beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_LOGIN_PER_MINUTE: '1000' }, { queue: true })
  client = formClient(t)
  email = `upload-${Math.random().toString(36).slice(2, 8)}@example.com`
  await client.signUp(email)
  await client.submit('/domains', { domain_name: 'example.com', automation_level: 'manual' })
  await t.db.database.db.execute(sql`update domains set verified_at = now() where name = 'example.com'`)
}, 60_000)
afterAll(() => t.close())

describe('the upload page', () => {
  test('is a report tab with a multi-file form that posts multipart with the CSRF token', async () => {
    const page = await client.get('/reports/upload')
    expect(page.status).toBe(200)
    expect(page.html).toContain('<a href="/reports/upload" aria-current="page">Upload reports</a>')
    expect(page.html).toMatch(
      /<form method="post" action="\/reports\/upload" enctype="multipart\/form-data"[^>]*data-upload>/,
    )
    expect(page.html).toMatch(/<input id="files" name="files" type="file" multiple required/)
    expect(csrfOf(page.html)).toBeTruthy()
    expect(page.html).toContain('<section id="upload-results" aria-live="polite" hidden>')
    // Its script, served by the app like the others (CSP 'self').
    const script = /<script src="(\/assets\/upload\.[0-9a-f]+\.js)" defer><\/script>/.exec(page.html)?.[1]
    expect(script).toBeDefined()
    const asset = await t.app.handle(new Request(`http://localhost${script}`))
    expect(asset.status).toBe(200)
    expect(await asset.text()).toContain('XMLHttpRequest')
    // Reachable from the other report pages.
    expect((await client.get('/reports')).html).toContain('href="/reports/upload"')
  })

  test('logged out, it sends to the login page', async () => {
    const anonymous = formClient(t)
    const page = await anonymous.get('/reports/upload')
    expect(page.status).toBe(303)
    expect(page.location).toBe('/login?next=%2Freports%2Fupload')
  })
})

describe('posting files', () => {
  test('many files at once (no script): the page lists what became of each', async () => {
    const files = [
      await file(`${AGG}/extract_report/nice-input.xml.gz`, 'nice-input.xml.gz'),
      await file(`${AGG}/extract_report/nice-input.xml`, 'nice-input.xml'),
      await file(
        `${AGG}/aggregate/fastmail.com!example.com!1516060800!1516147199!102675056.xml.gz`,
        'fastmail.xml.gz',
      ),
      new File(['my notes about DMARC'], 'notes.txt'),
    ]
    const answer = await upload(files)
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toContain('text/html')
    const row = (name: string) =>
      new RegExp(
        `<tr><th scope="row">${name.replace(/\./g, '\\.')}</th><td><span class="badge (\\w+)">(\\w+)</span></td><td>([^<]*)`,
      ).exec(answer.text)
    // The gzip arrived byte for byte: it is stored, and the same report as XML is a duplicate.
    expect(row('nice-input.xml.gz')?.slice(1, 3)).toEqual(['ok', 'stored'])
    expect(row('nice-input.xml.gz')?.[3]).toContain('report 11038226378739404135')
    expect(row('nice-input.xml')?.slice(1, 3)).toEqual(['unknown', 'duplicate'])
    expect(row('fastmail.xml.gz')?.slice(1, 3)).toEqual(['warning', 'quarantined'])
    expect(row('fastmail.xml.gz')?.[3]).toContain('domain_not_in_account')
    expect(row('notes.txt')?.slice(1, 3)).toEqual(['missing', 'skipped'])
    expect(answer.text).toContain('4 items: 1 stored, 1 duplicate, 1 quarantined, 1 skipped')
    const stored = rowsOf<{ source: string; status: string }>(
      await t.db.database.db.execute(sql`select source, status from ingest_messages order by received_at`),
    )
    expect(stored).toEqual([
      { source: 'dashboard', status: 'processed' },
      { source: 'dashboard', status: 'processed' },
      { source: 'dashboard', status: 'quarantined' },
    ])
  })

  test('one file asking for JSON (what the script does) gets its items', async () => {
    const answer = await upload([await file('tests/fixtures/dmarc-aggregate/mox/google.eml', 'google.eml')], {
      json: true,
    })
    expect(answer.status).toBe(200)
    const body = JSON.parse(answer.text)
    expect(body.data.items).toEqual([
      {
        status: 'quarantined',
        label: 'google.eml',
        detail: expect.stringContaining('domain_not_in_account'),
        code: 'domain_not_in_account',
      },
    ])
    expect(body.data.summary).toBe('1 item: 0 stored, 0 duplicate, 1 quarantined')
  })

  test('no file, no CSRF token, another site: refused', async () => {
    expect((await upload([])).status).toBe(400)
    const none = await upload([new File(['x'], 'x.xml')], { csrf: null })
    expect(none.status).toBe(403)
    const foreign = await upload([new File(['x'], 'x.xml')], { origin: 'http://evil.example' })
    expect(foreign.status).toBe(403)
    // Another user's token does not do either.
    const other = formClient(t)
    await other.signUp(`other-${Math.random().toString(36).slice(2, 8)}@example.com`)
    const theirs = csrfOf((await other.get('/reports/upload')).html)
    expect((await upload([new File(['x'], 'x.xml')], { csrf: theirs })).status).toBe(403)
  })

  test('reports go to the uploader’s account only', async () => {
    const rows = rowsOf<{ email: string }>(
      await t.db.database.db.execute(sql`select distinct u.email from aggregate_reports r
        join memberships m on m.account_id = r.account_id join users u on u.id = m.user_id`),
    )
    expect(rows).toEqual([{ email }])
  })
})
