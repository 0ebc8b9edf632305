import { describe, expect, test } from 'bun:test'
import { discoverDmarc } from '../../../domain/dmarc/discovery.ts'
import { parseReportUri, type ReportUri } from '../../../domain/dmarc/report-uri.ts'
import { dmarcProof, namesReportAddress } from '../../../domain/domains/dmarc-proof.ts'
import { zone } from '../dmarc/zone.ts'

// The DMARC record as a proof of ownership (docs/api.md, "Verifying a domain").

const ADDRESS = 'rabcdefghijklmnop@in.dmarcwatch.test'

const uri = (raw: string) => parseReportUri(raw) as ReportUri

describe('namesReportAddress', () => {
  test('the address, without case, with a size suffix or a +tag', () => {
    expect(namesReportAddress(uri(`mailto:${ADDRESS}`), ADDRESS)).toBe(true)
    expect(namesReportAddress(uri(`mailto:${ADDRESS.toUpperCase()}!10m`), ADDRESS)).toBe(true)
    expect(namesReportAddress(uri('mailto:rabcdefghijklmnop+ruf@in.dmarcwatch.test'), ADDRESS)).toBe(true)
    expect(namesReportAddress(uri('mailto:rabcdefghijklmnop%40in.dmarcwatch.test@x.example'), ADDRESS)).toBe(
      false,
    )
  })

  test('not another local part, another domain, or another scheme', () => {
    expect(namesReportAddress(uri('mailto:rabcdefghijklmnoq@in.dmarcwatch.test'), ADDRESS)).toBe(false)
    expect(namesReportAddress(uri('mailto:rabcdefghijklmnop@in.dmarcwatch.test.evil.example'), ADDRESS)).toBe(
      false,
    )
    expect(namesReportAddress(uri('mailto:xrabcdefghijklmnop@in.dmarcwatch.test'), ADDRESS)).toBe(false)
    expect(namesReportAddress(uri('https://in.dmarcwatch.test/rabcdefghijklmnop'), ADDRESS)).toBe(false)
  })
})

describe('dmarcProof', () => {
  const dns = zone({
    '_dmarc.own.example|TXT': [`v=DMARC1; p=none; rua=mailto:a@own.example, mailto:${ADDRESS}!1g`],
    '_dmarc.ruf.example|TXT': [`v=DMARC1; p=none; rua=mailto:a@ruf.example; ruf=mailto:${ADDRESS}`],
    '_dmarc.parent.example|TXT': [`v=DMARC1; p=reject; rua=mailto:${ADDRESS}`],
    '_dmarc.other.example|TXT': ['v=DMARC1; p=none; rua=mailto:r2222222222222222@in.dmarcwatch.test'],
  })
  const proofOf = async (name: string) => dmarcProof(await discoverDmarc({ dns }, name), ADDRESS)

  test("the domain's own record, in rua or ruf", async () => {
    expect(await proofOf('own.example')).toMatchObject({ proof: 'dmarc_rua' })
    expect(await proofOf('ruf.example')).toMatchObject({ proof: 'dmarc_ruf' })
  })

  test("a subdomain's organizational domain's record", async () => {
    expect(await proofOf('mail.parent.example')).toMatchObject({ proof: 'dmarc_rua' })
  })

  test("nothing from a public suffix operator's record, which speaks for domains it does not run", async () => {
    const psd = zone({ '_dmarc.com': `v=DMARC1; p=reject; psd=y; rua=mailto:${ADDRESS}` })
    const discovery = await discoverDmarc({ dns: psd }, 'victim.com')
    expect(discovery.policyRole).toBe('public_suffix_domain')
    expect(dmarcProof(discovery, ADDRESS)).toBeNull()
  })

  test('nothing from a record naming another address, or from no record', async () => {
    expect(await proofOf('other.example')).toBeNull()
    expect(await proofOf('none.example')).toBeNull()
  })
})
