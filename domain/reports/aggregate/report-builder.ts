// Turns element events into aggregate-report events (RFC 7489 Appendix C, RFC 9990 Appendix A),
// one record at a time: nothing but the metadata and the current record is kept.
//
// Tolerance: elements are found by local name in any order within their parent; unknown elements
// and text in mixed content are ignored; `<feedback>` may sit inside a wrapper, and reading stops
// at `</feedback>`. Required elements must be present; only report_id, policy domain, source_ip,
// count and the dates also need a value.

import type { AggregateEvent, AggregateParseError, AggregateRecord } from '../aggregate-types.ts'
import { createRecordReader } from './record-reader.ts'
import {
  DATE_RANGE,
  enter,
  FEEDBACK,
  IGNORED,
  LEAF,
  METADATA,
  OUTSIDE,
  POLICY,
  RECORD,
} from './report-contexts.ts'
import {
  assignMetadataField,
  assignPolicyField,
  buildMetadata,
  checkMetadata,
  checkPolicy,
  dmarcNamespace,
  MAX_REPEATED,
  namespaceDeclarations,
  newMetadataDraft,
  newPolicyDraft,
  optional,
} from './report-fields.ts'
import { EMPTY_TEXT, type XmlText } from './xml-text.ts'
import type { XmlSink } from './xml-tokenizer.ts'

/**
 * Records read before report_metadata and policy_published are complete (the schema puts them
 * after): held back until the metadata arrives, up to this many; then limit_exceeded.
 */
export const MAX_RECORDS_BEFORE_METADATA = 1000

export interface ReportBuilder {
  sink: XmlSink
  /** The events produced since the last call. */
  take(): AggregateEvent[]
  /** True once `</feedback>` was read or an error was emitted: nothing more will come. */
  readonly finished: boolean
  fail(error: AggregateParseError): void
  /** End of input. */
  finish(): void
}

export function createReportBuilder(): ReportBuilder {
  let out: AggregateEvent[] = []
  let finished = false
  const contexts: number[] = [OUTSIDE]
  let firstElement: string | null = null
  let namespace: string | null = null
  /**
   * Namespace declarations in scope on the elements up to <feedback>, innermost last, each with the
   * depth of the element that made it: dropped when that element closes (Namespaces in XML §6.1).
   */
  const namespaces: { prefix: string; uri: string; depth: number }[] = []
  let feedbackOpen = false
  const meta = newMetadataDraft()
  const policy = newPolicyDraft()
  let metadataDone = false
  let policyDone = false
  let emitted = false
  let early: AggregateRecord[] = []
  // A record's defect found before the metadata is complete: reported only once the metadata is
  // there, because a report without report_metadata or policy_published is broken first of all
  // (its records' defects would name the wrong cause in the quarantine).
  let deferred: AggregateParseError | null = null
  const records = createRecordReader()

  /** Emits the error (once) and stops: the sink answers false. */
  function fail(error: AggregateParseError): boolean {
    if (!finished) out.push({ type: 'error', error })
    finished = true
    return false
  }
  const check = (error: AggregateParseError | null) => (error === null ? true : fail(error))
  /** A record's defect: fatal once the metadata was emitted, held back until then. */
  const checkRecord = (error: AggregateParseError | null) => {
    if (error === null) return true
    if (emitted) return fail(error)
    deferred ??= error
    return true
  }

  function emitMetadata(): boolean {
    if (emitted || !metadataDone || !policyDone) return true
    if (deferred !== null) return fail(deferred)
    emitted = true
    out.push({ type: 'metadata', metadata: buildMetadata(meta, policy, namespace) })
    for (const record of early) out.push({ type: 'record', record })
    early = []
    return true
  }

  function closeRecord(): boolean {
    const error = records.close(RECORD)
    if (error !== null) return checkRecord(error)
    if (deferred !== null) return true
    if (emitted) out.push({ type: 'record', record: records.record })
    else if (early.length < MAX_RECORDS_BEFORE_METADATA) early.push(records.record)
    else {
      const message = `more than ${MAX_RECORDS_BEFORE_METADATA} records come before report_metadata and policy_published`
      return fail({ code: 'limit_exceeded', message })
    }
    return true
  }

  function closeStructure(context: number): boolean {
    switch (context) {
      case FEEDBACK:
        feedbackOpen = false
        if (!metadataDone) return fail({ code: 'missing_field', message: 'report_metadata is missing' })
        if (!policyDone) return fail({ code: 'missing_field', message: 'policy_published is missing' })
        finished = true
        return false
      case METADATA:
        metadataDone = check(checkMetadata(meta))
        return metadataDone && emitMetadata()
      case POLICY:
        policyDone = check(checkPolicy(policy))
        return policyDone && emitMetadata()
      case RECORD:
        return closeRecord()
      case DATE_RANGE:
        return true
      default:
        return checkRecord(records.close(context))
    }
  }

  function closeValue(parent: number, name: string, text: XmlText): boolean {
    switch (parent) {
      case FEEDBACK:
        meta.version = optional(text)
        return true
      case METADATA:
      case DATE_RANGE:
        if (assignMetadataField(meta, name, text)) return true
        return fail({
          code: 'limit_exceeded',
          message: `more than ${MAX_REPEATED} report_metadata/error elements`,
        })
      case POLICY:
        assignPolicyField(policy, name, text)
        return true
      default:
        return checkRecord(records.value(parent, name, text))
    }
  }

  const sink: XmlSink = {
    open(name, attributes, prefix) {
      const context = enter(contexts[contexts.length - 1]!, name)
      contexts.push(context)
      if (firstElement === null) firstElement = name
      if (context === FEEDBACK) feedbackOpen = true
      // RFC 9990 Appendix A: the namespace is declared on <feedback> (or a wrapper around it). It is
      // <feedback>'s own, through its prefix: `xmlns:ns1="…"` beside an unprefixed <feedback>
      // binds a prefix nothing uses (Namespaces in XML 1.0 §6.2; a real AOL report does this).
      if (context <= FEEDBACK) {
        if (attributes !== '')
          for (const [declared, uri] of namespaceDeclarations(attributes))
            namespaces.push({ prefix: declared, uri, depth: contexts.length })
        if (context === FEEDBACK)
          namespace = dmarcNamespace(namespaces.findLast((entry) => entry.prefix === prefix)?.uri)
      }
      return context >= RECORD && context < LEAF ? checkRecord(records.open(context)) : true
    },
    close(name, text) {
      while (namespaces.length > 0 && namespaces[namespaces.length - 1]!.depth >= contexts.length)
        namespaces.pop()
      const context = contexts.pop()!
      if (context === LEAF) return closeValue(contexts[contexts.length - 1]!, name, text ?? EMPTY_TEXT)
      return context === IGNORED || context === OUTSIDE ? true : closeStructure(context)
    },
  }

  return {
    sink,
    take() {
      const events = out
      out = []
      return events
    },
    get finished() {
      return finished
    },
    fail(error) {
      fail(error)
    },
    finish() {
      if (finished) return
      if (feedbackOpen) fail({ code: 'not_xml', message: 'the input ends before </feedback>' })
      else if (firstElement !== null) {
        const message = `no <feedback> element (the root element is <${firstElement}>)`
        fail({ code: 'not_aggregate_report', message })
      } else fail({ code: 'not_xml', message: 'no XML element found' })
    },
  }
}
