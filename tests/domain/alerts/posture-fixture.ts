import { assessPosture } from '../../../domain/posture/assess.ts'
import { collectFindings } from '../../../domain/posture/collect.ts'
import type { Posture, PostureFindings } from '../../../domain/posture/posture.ts'
import { RSA_2048_SPKI } from '../dkim/keys.ts'
import { type ZoneValue, zone } from '../dmarc/zone.ts'

// A realistic posture check: the real collector and assessor over an in-memory zone. `healthyZone`
// is a domain with nothing to alert about; each test changes the one record it is about.

export const DOMAIN = 'example.com'
export const REPORT_ADDRESS = 'k7@reports.dmarcwatch.test'

export function healthyZone(): Record<string, ZoneValue> {
  return {
    '_dmarc.example.com': `v=DMARC1; p=reject; rua=mailto:${REPORT_ADDRESS}`,
    'example.com._report._dmarc.reports.dmarcwatch.test': 'v=DMARC1',
    'example.com': 'v=spf1 include:_spf.example.net -all',
    '_spf.example.net': 'v=spf1 ip4:192.0.2.0/24 -all',
    'example.com|MX': {
      status: 'ok',
      authenticated: false,
      records: [{ type: 'MX', preference: 10, exchange: 'mx.example.com', ttl: 300 }],
    },
    'google._domainkey.example.com': `v=DKIM1; k=rsa; p=${RSA_2048_SPKI}`,
    '_mta-sts.example.com': 'v=STSv1; id=20240101',
    '_smtp._tls.example.com': `v=TLSRPTv1; rua=mailto:${REPORT_ADDRESS}`,
  }
}

export interface Check {
  posture: Posture
  findings: PostureFindings
}

export async function check(
  changes: Record<string, ZoneValue | null> = {},
  selectors: { configured?: string[]; learned?: string[] } = {},
): Promise<Check> {
  const entries = { ...healthyZone() }
  for (const [name, value] of Object.entries(changes)) {
    if (value === null) delete entries[name]
    else entries[name] = value
  }
  const findings = await collectFindings(
    {
      dns: zone(entries),
      fetchMtaStsPolicy: async () => ({
        status: 'ok',
        text: 'version: STSv1\nmode: enforce\nmx: mx.example.com\nmax_age: 604800\n',
      }),
    },
    {
      domain: DOMAIN,
      configuredSelectors: selectors.configured ?? [],
      learnedSelectors: selectors.learned ?? [],
      now: new Date('2026-05-10T08:00:00Z'),
    },
  )
  return { posture: assessPosture(findings, { reportAddress: REPORT_ADDRESS }), findings }
}
