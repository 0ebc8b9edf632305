// A small metrics registry writing the Prometheus text exposition format, version 0.0.4.
//
// Hand-written rather than prom-client: we need counters, gauges and histograms with fixed label
// names and the text format, which is a page of code; prom-client's default collectors lean on
// Node internals Bun has broken more than once (perf_hooks.monitorEventLoopDelay), and its hot path
// hashes a label object on every observation. Here a series is found by its label values joined
// into one string, so recording a request costs two Map lookups (docs/operations.md, Metrics).

export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

type Labels<L extends string> = Readonly<Record<L, string | number>>

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/

/** Label values escape backslash, double quote and newline (the format's only escapes). */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}

/** HELP text escapes backslash and newline only. */
function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')
}

export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN'
  if (value === Number.POSITIVE_INFINITY) return '+Inf'
  if (value === Number.NEGATIVE_INFINITY) return '-Inf'
  return String(value)
}

interface Options<L extends string> {
  name: string
  help: string
  labelNames?: readonly L[]
}

interface Series {
  /** `a="x",b="y"`: rendered once, when the series is first seen. */
  labelText: string
}

abstract class Family<L extends string, S extends Series> {
  readonly name: string
  readonly help: string
  readonly labelNames: readonly L[]
  protected readonly series = new Map<string, S>()

  constructor(options: Options<L>) {
    if (!METRIC_NAME.test(options.name)) throw new Error(`invalid metric name ${options.name}`)
    for (const label of options.labelNames ?? []) {
      if (!LABEL_NAME.test(label) || label.startsWith('__') || label === 'le')
        throw new Error(`invalid label name ${label} on ${options.name}`)
    }
    this.name = options.name
    this.help = options.help
    this.labelNames = options.labelNames ?? []
  }

  abstract readonly type: 'counter' | 'gauge' | 'histogram'
  protected abstract create(labelText: string): S
  protected abstract lines(series: S): string[]

  /** The series for these label values, created on first use. */
  protected at(labels: Labels<L> | undefined): S {
    const names = this.labelNames
    let key = ''
    for (let i = 0; i < names.length; i++) {
      const value = labels?.[names[i]!]
      if (value === undefined) throw new Error(`${this.name}: missing label ${names[i]}`)
      key += i === 0 ? String(value) : `\u0001${value}`
    }
    let series = this.series.get(key)
    if (series === undefined) {
      const labelText = names.map((n) => `${n}="${escapeLabelValue(String(labels![n]))}"`).join(',')
      series = this.create(labelText)
      this.series.set(key, series)
    }
    return series
  }

  render(): string {
    // A family without labels always has its one series, so it shows 0 before its first event.
    if (this.labelNames.length === 0) this.at(undefined)
    let text = `# HELP ${this.name} ${escapeHelp(this.help)}\n# TYPE ${this.name} ${this.type}\n`
    for (const series of this.series.values()) for (const line of this.lines(series)) text += `${line}\n`
    return text
  }
}

const sample = (name: string, labelText: string, value: number) =>
  labelText === '' ? `${name} ${formatValue(value)}` : `${name}{${labelText}} ${formatValue(value)}`

interface ValueSeries extends Series {
  value: number
}

/** Counters and gauges: one number per series. */
abstract class ValueFamily<L extends string> extends Family<L, ValueSeries> {
  protected create(labelText: string): ValueSeries {
    return { labelText, value: 0 }
  }
  protected lines(series: ValueSeries): string[] {
    return [sample(this.name, series.labelText, series.value)]
  }
  get(labels?: Labels<L>): number {
    return this.at(labels).value
  }
}

export class Counter<L extends string = never> extends ValueFamily<L> {
  readonly type = 'counter'
  inc(labels?: Labels<L>, by = 1): void {
    if (!(by >= 0)) throw new Error(`${this.name}: a counter only goes up`)
    this.at(labels).value += by
  }
  /** Creates the series at 0, so `rate()` sees the first event as an increase. */
  init(labels?: Labels<L>): void {
    this.at(labels)
  }
}

export class Gauge<L extends string = never> extends ValueFamily<L> {
  readonly type = 'gauge'
  set(labels: Labels<L> | undefined, value: number): void {
    this.at(labels).value = value
  }
}

interface HistogramSeries extends Series {
  /** Per bucket, not cumulative (one increment per observation); summed up when rendered. */
  counts: Float64Array
  sum: number
  count: number
}

export class Histogram<L extends string = never> extends Family<L, HistogramSeries> {
  readonly type = 'histogram'
  readonly buckets: readonly number[]

  constructor(options: Options<L> & { buckets: readonly number[] }) {
    super(options)
    const sorted = [...new Set(options.buckets)].filter(Number.isFinite).sort((a, b) => a - b)
    if (sorted.length === 0) throw new Error(`${options.name}: a histogram needs buckets`)
    this.buckets = sorted
  }
  protected create(labelText: string): HistogramSeries {
    return { labelText, counts: new Float64Array(this.buckets.length), sum: 0, count: 0 }
  }
  protected lines(series: HistogramSeries): string[] {
    const prefix = series.labelText === '' ? '' : `${series.labelText},`
    const lines: string[] = []
    let cumulative = 0
    for (let i = 0; i < this.buckets.length; i++) {
      cumulative += series.counts[i]!
      lines.push(`${this.name}_bucket{${prefix}le="${formatValue(this.buckets[i]!)}"} ${cumulative}`)
    }
    lines.push(`${this.name}_bucket{${prefix}le="+Inf"} ${series.count}`)
    lines.push(sample(`${this.name}_sum`, series.labelText, series.sum))
    lines.push(sample(`${this.name}_count`, series.labelText, series.count))
    return lines
  }
  observe(labels: Labels<L> | undefined, value: number): void {
    const series = this.at(labels)
    const buckets = this.buckets
    // `le` is inclusive: a value equal to a bound belongs to that bucket.
    for (let i = 0; i < buckets.length; i++) {
      if (value <= buckets[i]!) {
        series.counts[i]!++
        break
      }
    }
    series.sum += value
    series.count++
  }
}

export class Registry {
  private readonly families = new Map<string, { name: string; render(): string }>()

  private add<F extends { name: string; render(): string }>(family: F): F {
    if (this.families.has(family.name)) throw new Error(`metric ${family.name} is already registered`)
    this.families.set(family.name, family)
    return family
  }
  counter<L extends string = never>(options: Options<L>): Counter<L> {
    return this.add(new Counter<L>(options))
  }
  gauge<L extends string = never>(options: Options<L>): Gauge<L> {
    return this.add(new Gauge<L>(options))
  }
  histogram<L extends string = never>(options: Options<L> & { buckets: readonly number[] }): Histogram<L> {
    return this.add(new Histogram<L>(options))
  }
  /** Every family in registration order, in the text format. */
  render(): string {
    let text = ''
    for (const family of this.families.values()) text += family.render()
    return text
  }
}
