// Realistic DMARC aggregate reports for the benchmarks: deterministic from a seed. Sized to the
// issue's reference (100,000 records ≈ 42 MB of XML): records as Google writes them (no
// envelope_from, no SPF scope), 15% of them with a second (ESP) DKIM signature.

function rng(seed: number) {
  let state = seed >>> 0 || 1
  return () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return (state >>> 0) / 4294967296
  }
}

export function aggregateXml(input: {
  domain: string
  reportId: string
  records: number
  seed: number
}): string {
  const random = rng(input.seed)
  const begin = Math.floor(Date.now() / 86_400_000) * 86_400 - 86_400
  const parts: string[] = [
    `<?xml version="1.0" encoding="UTF-8" ?>
<feedback>
  <report_metadata>
    <org_name>google.com</org_name>
    <email>noreply-dmarc-support@google.com</email>
    <extra_contact_info>https://support.google.com/a/answer/2466580</extra_contact_info>
    <report_id>${input.reportId}</report_id>
    <date_range>
      <begin>${begin}</begin>
      <end>${begin + 86_399}</end>
    </date_range>
  </report_metadata>
  <policy_published>
    <domain>${input.domain}</domain>
    <adkim>r</adkim>
    <aspf>r</aspf>
    <p>quarantine</p>
    <sp>quarantine</sp>
    <pct>100</pct>
  </policy_published>
`,
  ]
  for (let i = 0; i < input.records; i++) {
    const legit = random() < 0.7
    const ip = `${legit ? 209 : 45}.${Math.floor(random() * 250)}.${Math.floor(random() * 250)}.${Math.floor(random() * 250)}`
    const signer = legit ? input.domain : `spoof${Math.floor(random() * 1000)}.example`
    const second =
      random() < 0.15
        ? `<dkim><domain>esp${Math.floor(random() * 50)}.mailer.example</domain><selector>s${Math.floor(random() * 4)}</selector><result>pass</result></dkim>`
        : ''
    parts.push(
      `<record><row><source_ip>${ip}</source_ip><count>${1 + Math.floor(random() * 50)}</count><policy_evaluated><disposition>${legit ? 'none' : 'quarantine'}</disposition><dkim>${legit ? 'pass' : 'fail'}</dkim><spf>${legit ? 'pass' : 'fail'}</spf></policy_evaluated></row>
<identifiers><header_from>${input.domain}</header_from></identifiers>
<auth_results><dkim><domain>${signer}</domain><selector>${legit ? 'google' : 'x'}</selector><result>${legit ? 'pass' : 'fail'}</result></dkim>${second}<spf><domain>bounces.${legit ? input.domain : signer}</domain><result>${legit ? 'pass' : 'softfail'}</result></spf></auth_results></record>
`,
    )
  }
  parts.push('</feedback>\n')
  return parts.join('')
}

/** The report gzipped and attached to an email, as Google sends them. */
export function reportEmail(input: {
  to: string
  xml: string
  reportId: string
  domain: string
}): Uint8Array {
  const gz = Buffer.from(Bun.gzipSync(new TextEncoder().encode(input.xml))).toString('base64')
  const lines = gz.match(/.{1,76}/g) ?? []
  const name = `google.com!${input.domain}!1700000000!1700086399.xml.gz`
  return new TextEncoder().encode(
    [
      'From: noreply-dmarc-support@google.com',
      `To: ${input.to}`,
      `Subject: Report domain: ${input.domain} Submitter: google.com Report-ID: ${input.reportId}`,
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="000000000000b1b2b3"',
      '',
      '--000000000000b1b2b3',
      'Content-Type: text/plain; charset="UTF-8"',
      '',
      'This is an aggregate report from google.com.',
      '',
      '--000000000000b1b2b3',
      `Content-Type: application/gzip; name="${name}"`,
      `Content-Disposition: attachment; filename="${name}"`,
      'Content-Transfer-Encoding: base64',
      '',
      ...lines,
      '--000000000000b1b2b3--',
      '',
    ].join('\r\n'),
  )
}
