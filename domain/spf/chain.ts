// Splitting a flattened policy into TXT records that each fit one DNS answer, without changing
// what it evaluates to.
//
// 1. One record, when everything fits.
// 2. Otherwise include-chaining: runs of "+" terms move to `_spfN.<domain>` records reached by
//    include. An include matches exactly when its record passes (RFC 7208 §5.2), and a record of
//    "+" terms passes exactly when one of them matches, so each run keeps its meaning. Everything
//    else (other qualifiers, all, redirect, exp) stays in the root record, where <domain> is still
//    the root domain: the explanation text, which may use %{d} (§6.2), comes out the same.
// 3. Only if the root record still does not fit: redirect-chaining, which carries any qualifier
//    but runs later terms, and the exp= text, with <domain> set to the chained record's name.

export interface ChainPiece {
  /** Whether the term's qualifier is "+": only those can move behind an include. */
  plus: boolean
  /** The term as it must be written in the root record, and in a chained record. */
  root: string
  chained: string
}

export interface ChainInput {
  domain: string
  pieces: ChainPiece[]
  /** The final all (or kept redirect=), if any. */
  ending: { root: string; chained: string } | null
  exp: { root: string; chained: string } | null
  /** Chained records are `<label><n>.<domain>`. */
  label: string
  maxStringLength: number
  /** RDATA (strings plus one length octet each) stays under this. */
  maxRecordBytes: number
}

export interface ChainedRecord {
  name: string
  text: string
  /** The character-strings to publish. */
  strings: string[]
  /** RDATA size: the strings plus one length octet each. */
  bytes: number
}

export interface Chain {
  records: ChainedRecord[]
  method: 'single' | 'include' | 'redirect'
  caveats: string[]
}

/**
 * RFC 7208 §3.3: strings are joined without separators, so any split point is equivalent; splitting
 * after a space keeps each string readable. A term longer than a string is cut where it must be.
 */
export function splitTxtStrings(text: string, maxStringLength = 255): string[] {
  const out: string[] = []
  let start = 0
  while (text.length - start > maxStringLength) {
    const space = text.lastIndexOf(' ', start + maxStringLength - 1)
    const end = space > start ? space + 1 : start + maxStringLength
    out.push(text.slice(start, end))
    start = end
  }
  out.push(text.slice(start))
  return out
}

function record(input: ChainInput, name: string, parts: string[]): ChainedRecord {
  const text = ['v=spf1', ...parts].filter((part) => part !== '').join(' ')
  const strings = splitTxtStrings(text, input.maxStringLength)
  return { name, text, strings, bytes: text.length + strings.length }
}

/** Greedy packing of terms into records, each checked against the size limit as it will be built. */
function pack<T>(
  items: readonly T[],
  build: (group: T[], index: number) => ChainedRecord[],
  max: number,
): T[][] {
  const groups: T[][] = [[]]
  for (const item of items) {
    const index = groups.length - 1
    const current = groups[index]!
    const candidate = [...current, item]
    const fits = build(candidate, index).every((r) => r.bytes < max)
    if (current.length > 0 && !fits) groups.push([item])
    else current.push(item)
  }
  return groups
}

function chainName(input: ChainInput, index: number): string {
  return `${input.label}${index}.${input.domain}`
}

function single(input: ChainInput): ChainedRecord {
  const parts = input.pieces.map((p) => p.root)
  return record(input, input.domain, [...parts, input.ending?.root ?? '', input.exp?.root ?? ''])
}

type Slot = { kind: 'term'; text: string } | { kind: 'chunk'; pieces: ChainPiece[] }

function includeChain(input: ChainInput): ChainedRecord[] {
  const slots: Slot[] = []
  let run: ChainPiece[] = []
  const flush = () => {
    const build = (group: ChainPiece[]) => [
      record(
        input,
        chainName(input, 99),
        group.map((p) => p.chained),
      ),
    ]
    if (run.length > 0)
      for (const pieces of pack(run, build, input.maxRecordBytes)) slots.push({ kind: 'chunk', pieces })
    run = []
  }
  for (const piece of input.pieces) {
    if (piece.plus) run.push(piece)
    else {
      flush()
      slots.push({ kind: 'term', text: piece.root })
    }
  }
  flush()
  const build = (all: Slot[]) => {
    let n = 0
    const chained: ChainedRecord[] = []
    const parts = all.flatMap((slot) => {
      if (slot.kind === 'term') return [slot.text]
      if (slot.pieces.length === 0) return []
      const name = chainName(input, ++n)
      chained.push(
        record(
          input,
          name,
          slot.pieces.map((p) => p.chained),
        ),
      )
      return [`include:${name}`]
    })
    const root = record(input, input.domain, [...parts, input.ending?.root ?? '', input.exp?.root ?? ''])
    return [root, ...chained]
  }
  // Pull terms back into the root record while it has room: each chunk left behind costs a lookup.
  for (let k = 0; k < slots.length; k++) {
    const slot = slots[k]!
    if (slot.kind !== 'chunk') continue
    while (slot.pieces.length > 0) {
      const term: Slot = { kind: 'term', text: slot.pieces[0]!.root }
      const rest: Slot = { kind: 'chunk', pieces: slot.pieces.slice(1) }
      if (build([...slots.slice(0, k), term, rest, ...slots.slice(k + 1)])[0]!.bytes >= input.maxRecordBytes)
        break
      slots.splice(k, 0, term)
      k += 1
      slot.pieces.shift()
    }
  }
  return build(slots)
}

function redirectChain(input: ChainInput): ChainedRecord[] {
  const build = (group: ChainPiece[], index: number, next: number | null) => {
    const terms = group.map((p) => (index === 0 ? p.root : p.chained))
    const form = index === 0 ? 'root' : 'chained'
    const tail = next === null ? (input.ending?.[form] ?? '') : `redirect=${chainName(input, next)}`
    const name = index === 0 ? input.domain : chainName(input, index)
    return record(input, name, [...terms, tail, input.exp?.[form] ?? ''])
  }
  // A group must fit both as the last record and as one that redirects onwards.
  const groups = pack(input.pieces, (g, i) => [build(g, i, null), build(g, i, i + 1)], input.maxRecordBytes)
  return groups.map((group, i) => build(group, i, i === groups.length - 1 ? null : i + 1))
}

export function chainRecords(input: ChainInput): Chain {
  const one = single(input)
  if (one.bytes < input.maxRecordBytes) return { records: [one], method: 'single', caveats: [] }
  const included = includeChain(input)
  if (included[0]!.bytes < input.maxRecordBytes) return { records: included, method: 'include', caveats: [] }
  const caveats =
    input.exp === null
      ? []
      : ['exp= text is expanded with %{d} set to the chained record that matched (RFC 7208 §6.2)']
  return { records: redirectChain(input), method: 'redirect', caveats }
}
