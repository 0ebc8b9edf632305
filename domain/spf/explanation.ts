// The explanation of a fail (RFC 7208 §6.2). Any problem with it is ignored: it never changes the
// result, and its lookups do not count against the processing limits (§4.6.4).

import type { DnsResolver } from '../dns/ports.ts'
import type { IpAddress } from './ip.ts'
import { isQueryableName, query, validatedDomain } from './lookups.ts'
import {
  expandDomainSpec,
  expandMacros,
  type MacroParse,
  type MacroValues,
  parseMacroString,
  usesLetter,
} from './macro.ts'
import { type DomainSpec, joinTxtStrings } from './record.ts'

// Explanation texts parsed before, by their exact text: the same exp= TXT and default explanation
// come back on every fail. Bounded: 256 texts of at most 2,048 characters each.
const parsedTexts = new Map<string, MacroParse>()
const MAX_TEXTS = 256
const MAX_TEXT_LENGTH = 2048

function parseExplanation(text: string): MacroParse {
  const hit = parsedTexts.get(text)
  if (hit !== undefined) return hit
  const parsed = parseMacroString(text, 'explanation')
  if (text.length > MAX_TEXT_LENGTH) return parsed
  if (parsedTexts.size >= MAX_TEXTS) parsedTexts.delete(parsedTexts.keys().next().value!)
  parsedTexts.set(text, Object.freeze(parsed))
  return parsed
}

async function expandText(dns: DnsResolver, text: string, values: MacroValues): Promise<string | undefined> {
  // §6.2: explain-string = *( macro-string / SP ); 7-bit ASCII only, so other text is a syntax error.
  const parsed = parseExplanation(text)
  if (!parsed.ok) return undefined
  if (!usesLetter(parsed.tokens, 'p')) return expandMacros(parsed.tokens, values)
  const validated = await validatedDomain(dns, values.ip, values.domain)
  return expandMacros(parsed.tokens, { ...values, validatedDomain: validated })
}

async function fetchExplanation(dns: DnsResolver, spec: DomainSpec, values: MacroValues & { ip: IpAddress }) {
  const name = usesLetter(spec.tokens, 'p')
    ? expandDomainSpec(spec.tokens, {
        ...values,
        validatedDomain: await validatedDomain(dns, values.ip, values.domain),
      })
    : expandDomainSpec(spec.tokens, values)
  if (!isQueryableName(name)) return undefined
  const answer = await query(dns, name, 'TXT')
  // §6.2: DNS errors, no records or more than one record: proceed as if there were no exp=.
  if (answer.status !== 'ok' || answer.records.length !== 1) return undefined
  const [record] = answer.records
  if (record?.type !== 'TXT') return undefined
  return expandText(dns, joinTxtStrings(record.strings), values)
}

/**
 * The explanation for a fail: the exp= text of the record that produced it, else the expanded
 * default (when the caller has one), else undefined.
 */
export async function explain(
  dns: DnsResolver,
  values: MacroValues,
  exp: DomainSpec | null,
  defaultExplanation: string | undefined,
): Promise<string | undefined> {
  const fetched = exp === null ? undefined : await fetchExplanation(dns, exp, values)
  if (fetched !== undefined) return fetched
  return defaultExplanation === undefined ? undefined : expandText(dns, defaultExplanation, values)
}
