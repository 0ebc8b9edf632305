// What a failure report without an ARF part says in prose. There is no standard here: the
// patterns are the phrasings seen from real MTAs (Exim's DMARC module, the RFC 5965/6591 example
// boilerplate "received from IP ...", subjects such as "DMARC Forensic Report for <domain> from IP
// <ip>"), tried from the most to the least specific.

export interface PlainTextDetails {
  /** Candidates in order of preference; the caller keeps the first that is an IP address. */
  sourceIp: string[]
  reportedDomain: string | null
  arrivalDate: string | null
  identityAlignment: string[]
  mentionsDmarc: boolean
}

const IP = '([0-9A-Fa-f][0-9A-Fa-f:.]*[0-9A-Fa-f])'
const DOMAIN = '([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+)'

const IP_PATTERNS = [
  new RegExp(`\\bSender IP(?: Address)?:[ \\t]*\\[?${IP}`, 'i'),
  new RegExp(`\\bSource[- ]IP(?: Address)?:[ \\t]*\\[?${IP}`, 'i'),
  new RegExp(`\\breceived\\s+from\\s+IP\\s+\\[?${IP}`, 'i'),
  new RegExp(`\\bfrom\\s+IP\\s+\\[?${IP}`, 'i'),
  new RegExp(`\\bIP[:=][ \\t]*\\[?${IP}`, 'i'),
]

const DOMAIN_PATTERNS = [
  new RegExp(`\\bSender Domain:[ \\t]*${DOMAIN}`, 'i'),
  new RegExp(`\\bReported[- ]Domain:[ \\t]*${DOMAIN}`, 'i'),
  new RegExp(`\\bReport(?:ed)? for(?: domain)?:?[ \\t]+${DOMAIN}`, 'i'),
]

const DATE_PATTERNS = [/\bReceived[- ]date:[ \t]*(.+)$/im, /\bArrival[- ]Date:[ \t]*(.+)$/im]

// Exim's DMARC failure report (src/moan.c, ERRMESS_DMARC_FORENSIC) is a plain single-part message:
// this subject and this opening sentence, nothing else marks it.
const PROSE_SUBJECT = /^\s*DMARC (?:Forensic|Failure) Report for [^\s()]+ \(?(?:from IP|[^)]*\bip=)/i
const PROSE_OPENING = /\bA message claiming to be from you has failed the published DMARC\s+policy\b/i

/**
 * Whether a message with no report part (no multipart/report, no attachment) is a failure report
 * all the same: Exim's own format, by its subject or its opening sentence.
 */
export function isProseFailureReport(text: string, subject: string): boolean {
  return PROSE_SUBJECT.test(subject) || PROSE_OPENING.test(text.slice(0, 4096))
}

export function findPlainTextDetails(text: string, subject: string): PlainTextDetails {
  const sources = [text, subject]
  const sourceIp: string[] = []
  for (const source of sources) {
    for (const pattern of IP_PATTERNS) {
      const match = pattern.exec(source)
      if (match) sourceIp.push(match[1]!)
    }
  }
  return {
    sourceIp,
    reportedDomain: firstMatch(sources, DOMAIN_PATTERNS),
    arrivalDate: firstMatch([text], DATE_PATTERNS)?.trim() ?? null,
    identityAlignment: alignment(text),
    mentionsDmarc: /\bDMARC\b/i.test(text) || /\bDMARC\b/i.test(subject),
  }
}

function firstMatch(sources: string[], patterns: RegExp[]): string | null {
  for (const source of sources) {
    for (const pattern of patterns) {
      const match = pattern.exec(source)
      if (match) return match[1]!
    }
  }
  return null
}

/** "SPF Alignment: no" / "DKIM Alignment: yes" (Exim) → RFC 7489 §7.3 Identity-Alignment values. */
function alignment(text: string): string[] {
  const spf = /\bSPF Alignment:[ \t]*(yes|no|pass|fail)\b/i.exec(text)?.[1]?.toLowerCase()
  const dkim = /\bDKIM Alignment:[ \t]*(yes|no|pass|fail)\b/i.exec(text)?.[1]?.toLowerCase()
  if (spf === undefined && dkim === undefined) return []
  const aligned = [
    ...(spf === 'yes' || spf === 'pass' ? ['spf'] : []),
    ...(dkim === 'yes' || dkim === 'pass' ? ['dkim'] : []),
  ]
  return aligned.length === 0 ? ['none'] : aligned
}
