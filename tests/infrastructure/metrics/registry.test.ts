import { describe, expect, test } from 'bun:test'
import { escapeLabelValue, formatValue, Registry } from '../../../infrastructure/metrics/registry.ts'

describe('the text exposition format (0.0.4)', () => {
  test('a counter: HELP, TYPE, one line per series, newline-terminated', () => {
    const registry = new Registry()
    const c = registry.counter<'method' | 'status'>({
      name: 'http_requests_total',
      help: 'Requests.',
      labelNames: ['method', 'status'],
    })
    c.inc({ method: 'GET', status: 200 })
    c.inc({ method: 'GET', status: 200 }, 2)
    c.inc({ method: 'POST', status: 201 })
    expect(registry.render()).toBe(
      '# HELP http_requests_total Requests.\n' +
        '# TYPE http_requests_total counter\n' +
        'http_requests_total{method="GET",status="200"} 3\n' +
        'http_requests_total{method="POST",status="201"} 1\n',
    )
    expect(c.get({ method: 'GET', status: 200 })).toBe(3)
  })

  test('a family without labels shows its single series at 0 before any event', () => {
    const registry = new Registry()
    registry.counter({ name: 'jobs_total', help: 'Jobs.' })
    registry.gauge({ name: 'depth', help: 'Depth.' }).set(undefined, 1.5)
    expect(registry.render()).toBe(
      '# HELP jobs_total Jobs.\n# TYPE jobs_total counter\njobs_total 0\n' +
        '# HELP depth Depth.\n# TYPE depth gauge\ndepth 1.5\n',
    )
  })

  test('init creates a labelled series at 0', () => {
    const registry = new Registry()
    const c = registry.counter<'outcome'>({ name: 'x_total', help: 'X.', labelNames: ['outcome'] })
    c.init({ outcome: 'quarantined' })
    expect(registry.render()).toContain('x_total{outcome="quarantined"} 0\n')
  })

  test('label values escape backslash, double quote and newline; HELP escapes backslash and newline', () => {
    expect(escapeLabelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd')
    const registry = new Registry()
    registry
      .counter<'route'>({ name: 'r_total', help: 'Back\\slash "quoted"\nsecond line', labelNames: ['route'] })
      .inc({ route: '/x/"y"\\\n' })
    const text = registry.render()
    expect(text).toContain('# HELP r_total Back\\\\slash "quoted"\\nsecond line\n')
    expect(text).toContain('r_total{route="/x/\\"y\\"\\\\\\n"} 1\n')
    // Nothing but the final newline ends a line: a newline in a value cannot split a sample.
    expect(text.split('\n')).toHaveLength(4)
  })

  test('special values', () => {
    expect(formatValue(Number.NaN)).toBe('NaN')
    expect(formatValue(Number.POSITIVE_INFINITY)).toBe('+Inf')
    expect(formatValue(Number.NEGATIVE_INFINITY)).toBe('-Inf')
    expect(formatValue(0.25)).toBe('0.25')
    expect(formatValue(12)).toBe('12')
  })
})

describe('histograms', () => {
  test('cumulative buckets, inclusive upper bounds, +Inf, sum and count', () => {
    const registry = new Registry()
    const h = registry.histogram<'route'>({
      name: 'd_seconds',
      help: 'D.',
      labelNames: ['route'],
      buckets: [0.1, 0.01, 1],
    })
    for (const v of [0.005, 0.01, 0.05, 0.5, 3]) h.observe({ route: '/a' }, v)
    expect(registry.render()).toBe(
      '# HELP d_seconds D.\n# TYPE d_seconds histogram\n' +
        'd_seconds_bucket{route="/a",le="0.01"} 2\n' +
        'd_seconds_bucket{route="/a",le="0.1"} 3\n' +
        'd_seconds_bucket{route="/a",le="1"} 4\n' +
        'd_seconds_bucket{route="/a",le="+Inf"} 5\n' +
        'd_seconds_sum{route="/a"} 3.565\n' +
        'd_seconds_count{route="/a"} 5\n',
    )
  })

  test('without labels the le label stands alone', () => {
    const registry = new Registry()
    registry.histogram({ name: 'lag_seconds', help: 'L.', buckets: [1] }).observe(undefined, 2)
    expect(registry.render()).toContain('lag_seconds_bucket{le="1"} 0\nlag_seconds_bucket{le="+Inf"} 1\n')
    expect(registry.render()).toContain('lag_seconds_sum 2\nlag_seconds_count 1\n')
  })
})

describe('guards', () => {
  test('names, reserved labels, duplicates, missing labels and negative increments are refused', () => {
    const registry = new Registry()
    expect(() => registry.counter({ name: 'bad-name', help: '' })).toThrow()
    expect(() => registry.counter({ name: 'ok', help: '', labelNames: ['__x'] })).toThrow()
    expect(() => registry.histogram({ name: 'h', help: '', labelNames: ['le'], buckets: [1] })).toThrow()
    registry.counter({ name: 'once', help: '' })
    expect(() => registry.gauge({ name: 'once', help: '' })).toThrow()
    const c = registry.counter<'a'>({ name: 'c', help: '', labelNames: ['a'] })
    expect(() => c.inc({} as never)).toThrow()
    expect(() => c.inc({ a: 'x' }, -1)).toThrow()
  })
})
