import type { DnsAnswer, DnsResolver } from '../dns/ports.ts'
import { DEMO_DOMAIN, demoZone } from './demo-world.ts'

// The demo domain's DNS (docs/demo.md). `.example` never resolves (RFC 2606 §3), so the records the
// demo's owner "published" are answered here, in front of the real resolver: posture checks,
// SPF evaluation and the DMARC policy the alert rules read see a realistic domain. Every other name
// goes to the real DNS, so the demo's include: targets resolve as they would for a real domain.

const TTL = 300

function inDemo(name: string): boolean {
  return name === DEMO_DOMAIN || name.endsWith(`.${DEMO_DOMAIN}`)
}

export function withDemoZone(dns: DnsResolver): DnsResolver {
  const zone = demoZone(DEMO_DOMAIN)
  return {
    resolve(name, type) {
      const owner = name.toLowerCase().replace(/\.$/, '')
      if (!inDemo(owner)) return dns.resolve(name, type)
      const texts = zone.get(owner)
      let answer: DnsAnswer
      if (texts === undefined) answer = { status: 'nxdomain', ttl: TTL }
      else if (type !== 'TXT') answer = { status: 'nodata', ttl: TTL }
      else
        answer = {
          status: 'ok',
          records: texts.map((text) => ({ type: 'TXT' as const, strings: [text], ttl: TTL })),
          authenticated: false,
        }
      return Promise.resolve(answer)
    },
  }
}
