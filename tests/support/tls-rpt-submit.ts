import type { TestApp } from './test-app.ts'

/** POST /api/v1/ingest/tls-rpt (RFC 8460 §6.4) with a report as JSON; the answer's status and body. */
export async function submitTlsReport(t: TestApp, token: string, report: unknown) {
  const response = await t.app.handle(
    new Request('http://localhost/api/v1/ingest/tls-rpt', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/tlsrpt+json' },
      body: JSON.stringify(report),
    }),
  )
  return { status: response.status, body: (await response.json()) as any }
}
