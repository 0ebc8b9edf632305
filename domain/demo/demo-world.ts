// The demo domain's world (docs/demo.md): who reports on it and who sends as it. Addresses are in
// the real networks of the services the sources catalog knows (domain/sources/sending-services.json),
// so classification, recommendations and alerts run on the demo exactly as on real reports; the
// spoofer's addresses are documentation-adjacent ranges no catalog entry claims.

/** The reserved name of every account's demo domain (`.example` is reserved by RFC 2606 §3). */
export const DEMO_DOMAIN = 'dmarcwatch-demo.example'

export function isDemoDomain(name: string): boolean {
  return name === DEMO_DOMAIN
}

export interface DemoReporter {
  /** `<org_name>` as this reporter writes it. */
  orgName: string
  email: string
  extraContact: string | null
  /** Sender host of the report mail and the first part of the attachment name (RFC 7489 §7.2.1.1). */
  submitter: string
  /** How this reporter packs the XML (Google zips, Microsoft and Yahoo gzip). */
  packing: 'zip' | 'gzip'
  /** Its share of the domain's recipients: how much of each source's mail it sees. */
  share: number
  /** Writes `<version>`, `<envelope_to>` and SPF `<scope>` (Microsoft does, Google does not). */
  verbose: boolean
}

export const DEMO_REPORTERS: readonly DemoReporter[] = [
  {
    orgName: 'google.com',
    email: 'noreply-dmarc-support@google.com',
    extraContact: 'https://support.google.com/a/answer/2466580',
    submitter: 'google.com',
    packing: 'zip',
    share: 0.55,
    verbose: false,
  },
  {
    orgName: 'Outlook.com',
    email: 'dmarcreport@microsoft.com',
    extraContact: null,
    submitter: 'enterprise.protection.outlook.com',
    packing: 'gzip',
    share: 0.3,
    verbose: true,
  },
  {
    orgName: 'Yahoo',
    email: 'dmarchelp@yahooinc.com',
    extraContact: null,
    submitter: 'yahoo.com',
    packing: 'gzip',
    share: 0.15,
    verbose: false,
  },
]

export interface DemoAuth {
  /** DKIM signatures as `d=` (a `{domain}` placeholder is the demo domain), selector and result. */
  dkim: readonly { domain: string; selector: string; result: 'pass' | 'fail' | 'neutral' }[]
  /** The envelope sender's domain checked by SPF, and its result. */
  spf: { domain: string; result: 'pass' | 'fail' | 'softfail' | 'neutral' | 'none' }
}

export interface DemoSource {
  /** What the demo calls it (not stored: the classifier finds the service from the evidence). */
  label: string
  ips: readonly string[]
  /** Messages a day across all reporters, before the day's variation. */
  dailyVolume: number
  auth: DemoAuth
  /** Days (counted back from yesterday, 0 = yesterday) on which this source sends; all when null. */
  activeDays: ((daysAgo: number) => boolean) | null
}

export const DEMO_SOURCES: readonly DemoSource[] = [
  {
    label: 'Google Workspace',
    ips: ['209.85.220.41', '209.85.220.65', '209.85.221.44', '209.85.128.170'],
    dailyVolume: 1400,
    auth: {
      dkim: [{ domain: '{domain}', selector: 'google', result: 'pass' }],
      spf: { domain: '{domain}', result: 'pass' },
    },
    activeDays: null,
  },
  {
    label: 'Microsoft 365',
    ips: ['40.107.22.100', '40.107.7.58', '52.100.174.222', '104.47.17.53'],
    dailyVolume: 620,
    auth: {
      dkim: [{ domain: '{domain}', selector: 'selector1', result: 'pass' }],
      spf: { domain: '{domain}', result: 'pass' },
    },
    activeDays: null,
  },
  {
    // Newsletters through SendGrid without the domain's own DKIM key: SendGrid signs as itself and
    // bounces to itself, so neither identifier aligns (RFC 7489 §3.1) and DMARC fails.
    label: 'SendGrid (not authenticated for the domain)',
    ips: ['167.89.101.2', '167.89.118.35', '149.72.154.232'],
    dailyVolume: 260,
    auth: {
      dkim: [{ domain: 'sendgrid.net', selector: 'smtpapi', result: 'pass' }],
      spf: { domain: 'bounces.sendgrid.net', result: 'pass' },
    },
    activeDays: null,
  },
  {
    // A mailing list re-sending the domain's mail: the list's server is not in the SPF record, and the
    // list keeps the original signature only where it does not rewrite the subject (RFC 7960 §3.2.3).
    label: 'Google Groups (mailing list)',
    ips: ['209.85.220.73'],
    dailyVolume: 40,
    auth: {
      dkim: [
        { domain: '{domain}', selector: 'google', result: 'fail' },
        { domain: 'googlegroups.com', selector: '20230601', result: 'pass' },
      ],
      spf: { domain: 'googlegroups.com', result: 'pass' },
    },
    activeDays: null,
  },
  {
    // Spoofing: unrelated hosts, no signature, SPF fails. Recent and growing, so it raises alerts.
    label: 'Unknown spoofer',
    ips: ['185.220.101.47', '185.220.101.52', '45.95.147.236', '91.92.109.12'],
    dailyVolume: 90,
    auth: {
      dkim: [],
      spf: { domain: '{domain}', result: 'fail' },
    },
    activeDays: (daysAgo) => daysAgo < 6,
  },
]

// RSA-2048 public keys made for the demo (their private halves were never kept): the DKIM check
// finds a valid key for each selector the reports name (RFC 6376 §3.6.1, RFC 8301 §3.2).
const GOOGLE_KEY =
  'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAmSzxwX12gR4wS8j6h2jwYsxjj7WNjXHmCBLP+2VNdq5fDlU96KEXpkJlg3j3JVgrFdNeAHD8g13ADjWm18D+zOjUFtzXkbbLHu8YZWr4ChasvyO10a4157O24ZPLCWrySR52jjsRnySB3nfuqYITFMowonDDo0k63+5W8jCH4msTMVxpclvDR1KOImxsIpnAKUpV6dyGTqqiihT5mPOlgjA1mrCcSO3ko+cMvT5xlGfO9dx0TIgtfEAEUs4gIx5iOylihS4+lToQJddjQyiaY9sN2joT6MKkS9Nq+u+ZdxhwtJEdbFqqfD/d5F/p0sUToA8vHyJ8yM0/a2x4HEqPIwIDAQAB'
const MICROSOFT_KEY =
  'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA4jOhWkz0V2NgYAXtcUU65z+voD8qFXB1AwPkE2rP0PmCYTJIsKImUGWeAxE4qS2Ymb3NmUqW2nHP6XBoIechQSrmm0hhvuN7Nj7gCCsq7Ojn7MY3wLRpFj4VQDgA8Ej/c2B0oSeQ/uULodJUtTRY9RuXgBM4nF5DnoFUy8wK8d/qy4AeVzk4TIWH3s+8g7YmkLlMt3Dsna3xu8kSkP68RlAkyaGR/MbGBv9/j9S+6zLkyY00roBfFfUl+3O/OTBDBNgsIxXKhYzXijX1zyPys8UvdatECva0MzY7YoeghVbkpp0Jm5INvUDDObdcCj4pAR8sXiyTI56QMy8gSBb3+QIDAQAB'

/**
 * The TXT records the demo's resolver serves (domain/demo/demo-zone.ts), as a domain owner at the
 * start of the road publishes them: DMARC at p=none with reports going to their own mailbox, SPF
 * covering Google and Microsoft but not SendGrid, and DKIM keys for the two mail platforms.
 */
export function demoZone(domain: string): Map<string, string[]> {
  return new Map([
    [`_dmarc.${domain}`, [`v=DMARC1; p=none; rua=mailto:dmarc@${domain}; ruf=mailto:dmarc@${domain}; fo=1`]],
    [domain, ['v=spf1 include:_spf.google.com include:spf.protection.outlook.com ~all']],
    [`google._domainkey.${domain}`, [`v=DKIM1; k=rsa; p=${GOOGLE_KEY}`]],
    [`selector1._domainkey.${domain}`, [`v=DKIM1; k=rsa; p=${MICROSOFT_KEY}`]],
  ])
}
