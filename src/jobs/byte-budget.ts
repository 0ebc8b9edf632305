// Admission by bytes (docs/ingestion.md, "Memory"): the worker takes on messages while the sum of
// their sizes stays within the budget, whatever their count. Messages stream through extraction,
// but some of a message can still be held (its text parts, a TLS-RPT report), and several large
// messages at once multiply that; small messages, the usual case, pass without waiting. A message
// larger than the whole budget is admitted alone.

export class ByteBudget {
  private used = 0
  private running = 0
  private readonly waiting: { bytes: number; admit: () => void }[] = []

  /**
   * `maxRunning`: messages at once whatever their bytes (INGEST_WORKER_CONCURRENCY). In ROLE=all
   * every message in flight is callbacks queued ahead of the API's requests on the one thread.
   */
  constructor(
    readonly limit: number,
    readonly maxRunning: number = Number.POSITIVE_INFINITY,
  ) {}

  /** Waits until `bytes` fit (in arrival order); call the returned function when done. */
  async acquire(bytes: number): Promise<() => void> {
    if (this.waiting.length > 0 || !this.fits(bytes)) {
      await new Promise<void>((admit) => this.waiting.push({ bytes, admit }))
    } else {
      this.take(bytes)
    }
    let released = false
    return () => {
      if (released) return
      released = true
      this.used -= bytes
      this.running--
      this.admitWaiting()
    }
  }

  /** Bytes admitted and not yet released. */
  get inFlight(): number {
    return this.used
  }

  private fits(bytes: number): boolean {
    if (this.running >= this.maxRunning) return false
    return this.running === 0 || this.used + bytes <= this.limit
  }

  private take(bytes: number): void {
    this.used += bytes
    this.running++
  }

  private admitWaiting(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.bytes)) {
      const next = this.waiting.shift()!
      this.take(next.bytes)
      next.admit()
    }
  }
}
