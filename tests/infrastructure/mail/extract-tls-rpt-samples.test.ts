import { expect, test } from 'bun:test'
import { parseTlsRptReport } from '../../../domain/reports/tls-rpt.ts'
import { extractReports, readAll } from '../../../infrastructure/mail/extract-reports.ts'

// Real TLS-RPT messages (tests/fixtures/tls-rpt/SOURCES.md) from the message to the typed report.

const LIMITS = {
  maxDecompressedBytes: 32 * 1024 * 1024,
  maxZipEntries: 100,
  maxCompressionRatio: 200,
  maxParts: 500,
}

test('Microsoft (mox testdata): a date range without a time offset is read as UTC', async () => {
  const raw = await Bun.file('tests/fixtures/tls-rpt/mox/microsoft.eml').bytes()
  const extracted = await extractReports(raw, LIMITS)
  if (!extracted.ok) throw new Error(JSON.stringify(extracted.reason))
  const [payload, ...rest] = extracted.value.payloads
  expect(rest).toEqual([])
  expect(payload).toMatchObject({
    kind: 'tls-rpt-json',
    compression: 'gzip',
    contentType: 'application/tlsrpt+gzip',
    filename: 'microsoft.com!test.xmox.nl!1673308800!1673395199!133198585438131172.json.gz',
  })
  const json = await readAll(payload!.open(), 1024 * 1024)
  if (!json.ok) throw new Error(JSON.stringify(json.reason))
  const parsed = parseTlsRptReport(new TextDecoder().decode(json.value))
  expect(parsed).toEqual({
    ok: true,
    report: {
      organizationName: 'Microsoft Corporation',
      startDatetime: '2023-01-10T00:00:00',
      endDatetime: '2023-01-10T23:59:59',
      // The same range as the attachment's file name: 2023-01-10T00:00:00Z to 23:59:59Z.
      begin: 1673308800,
      end: 1673395199,
      contactInfo: 'tlsrpt-noreply@microsoft.com',
      reportId: '133198585438131172+test.xmox.nl',
      policies: [
        {
          policyType: 'sts',
          policyStrings: ['version: STSv1', 'mode: enforce', 'mx: komijn.test.xmox.nl', 'max_age: 86400'],
          policyDomain: 'test.xmox.nl',
          mxHosts: [],
          totalSuccessfulSessionCount: 2,
          totalFailureSessionCount: 0,
          failureDetails: [],
        },
      ],
    },
  })
})
