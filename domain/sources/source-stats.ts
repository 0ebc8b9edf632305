// What the reports say about one sending IP of a domain over a period: the input of the sources
// list, the recommendations and the simulations. Every figure is a message count (weighted by each
// record's `count`, RFC 7489 §7.2), never a row count, so rates are `x / messages`.

export interface SourceStats {
  ip: string
  messages: number
  /** DMARC pass: DKIM or SPF aligned (RFC 7489 §3.1, §6.6.2). */
  dmarcPass: number
  dkimAligned: number
  spfAligned: number
  /** Raw results as reported, aligned or not: some DKIM signature passed / SPF passed. */
  dkimPass: number
  spfPass: number
  /** Messages whose reporter named a forwarding override (forwarded, mailing_list, trusted_forwarder). */
  forwarded: number
  /** Dispositions the receivers applied. */
  quarantined: number
  rejected: number
  /** ISO dates (YYYY-MM-DD). */
  firstSeen: string
  lastSeen: string
  /** Reverse DNS when looked up; null when the IP has none or it is not known yet. */
  ptr: string | null
  /** DKIM d= domains that signed this IP's mail with a pass (lower-case, at most a few). */
  dkimDomains: string[]
  /** SPF-authenticated domains (MAIL FROM or HELO) seen for this IP (lower-case, at most a few). */
  spfDomains: string[]
}
