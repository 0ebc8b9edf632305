import type { Server } from 'bun'

// Slack and Microsoft Teams incoming webhooks, for tests: real HTTP servers on 127.0.0.1 that hold each
// message to the documented shape and answer as the services do. A message that breaks the shape
// gets the service's refusal (Slack: 400 `invalid_blocks`; Teams workflows: 400) and is recorded with
// its problems, so a test sees why.
// - Slack (https://api.slack.com/messaging/webhooks, https://api.slack.com/reference/block-kit/blocks):
//   JSON with a non-empty `text` and a `blocks` array of known block types; header text plain_text of
//   at most 150 characters; section text at most 3000, fields at most 10 of at most 2000; buttons
//   with a `url`. Answers 200 `ok`.
// - Teams workflow webhooks ("Post to a channel when a webhook request is received"): a `message` with
//   one `application/vnd.microsoft.card.adaptive` attachment whose content is an `AdaptiveCard` with a
//   version and a non-empty `body` of typed elements. Answers 202 with no body.

export interface ChatArrival {
  path: string
  contentType: string
  body: any
  /** Empty when the message has the documented shape. */
  problems: string[]
  status: number
}

export interface ChatReceiver {
  readonly url: string
  readonly arrivals: ChatArrival[]
  /** The next `count` well-formed messages get `status` instead of the service's success. */
  failNext(count: number, status: number): void
  stop(): Promise<void>
}

const SLACK_BLOCKS = new Set(['section', 'context', 'header', 'actions', 'divider', 'image', 'rich_text'])

export function slackProblems(body: any): string[] {
  const problems: string[] = []
  if (typeof body?.text !== 'string' || body.text.length === 0)
    problems.push('text must be a non-empty string')
  if (!Array.isArray(body?.blocks) || body.blocks.length === 0)
    return [...problems, 'blocks must be an array']
  if (body.blocks.length > 50) problems.push('at most 50 blocks')
  const textObject = (o: any, where: string, max: number, plainOnly = false) => {
    if (o === null || typeof o !== 'object') {
      problems.push(`${where}: a text object`)
      return
    }
    if (!(o.type === 'plain_text' || (!plainOnly && o.type === 'mrkdwn')))
      problems.push(`${where}: type ${plainOnly ? 'plain_text' : 'plain_text or mrkdwn'}`)
    if (typeof o.text !== 'string' || o.text.length === 0 || o.text.length > max)
      problems.push(`${where}: text of 1..${max} characters`)
  }
  for (const [i, block] of (body.blocks as any[]).entries()) {
    const at = `blocks[${i}]`
    if (!SLACK_BLOCKS.has(block?.type)) {
      problems.push(`${at}: unknown type ${block?.type}`)
      continue
    }
    if (block.type === 'header') textObject(block.text, `${at}.text`, 150, true)
    if (block.type === 'section') {
      if (block.text === undefined && block.fields === undefined) problems.push(`${at}: text or fields`)
      if (block.text !== undefined) textObject(block.text, `${at}.text`, 3000)
      if (block.fields !== undefined) {
        if (!Array.isArray(block.fields) || block.fields.length > 10)
          problems.push(`${at}.fields: at most 10`)
        else for (const [j, f] of block.fields.entries()) textObject(f, `${at}.fields[${j}]`, 2000)
      }
    }
    if (block.type === 'context') {
      if (!Array.isArray(block.elements) || block.elements.length === 0 || block.elements.length > 10)
        problems.push(`${at}.elements: 1..10`)
      else for (const [j, e] of block.elements.entries()) textObject(e, `${at}.elements[${j}]`, 3000)
    }
    if (block.type === 'actions') {
      if (!Array.isArray(block.elements) || block.elements.length === 0)
        problems.push(`${at}.elements: non-empty`)
      else
        for (const [j, e] of block.elements.entries()) {
          if (e.type !== 'button') {
            problems.push(`${at}.elements[${j}]: a button`)
            continue
          }
          textObject(e.text, `${at}.elements[${j}].text`, 75, true)
          if (typeof e.url !== 'string' || !/^https?:\/\//.test(e.url))
            problems.push(`${at}.elements[${j}].url`)
        }
    }
  }
  return problems
}

const CARD_ELEMENTS = new Set(['TextBlock', 'FactSet', 'ColumnSet', 'Container', 'Image', 'RichTextBlock'])

export function teamsProblems(body: any): string[] {
  const problems: string[] = []
  if (body?.type !== 'message') problems.push('type must be "message"')
  if (!Array.isArray(body?.attachments) || body.attachments.length !== 1)
    return [...problems, 'attachments must hold one card']
  const [attachment] = body.attachments
  if (attachment.contentType !== 'application/vnd.microsoft.card.adaptive')
    problems.push('contentType must be application/vnd.microsoft.card.adaptive')
  const card = attachment.content
  if (card?.type !== 'AdaptiveCard') problems.push('content.type must be AdaptiveCard')
  if (typeof card?.version !== 'string' || !/^1\.[0-6]$/.test(card.version))
    problems.push('content.version 1.0..1.6')
  if (!Array.isArray(card?.body) || card.body.length === 0)
    return [...problems, 'content.body must be non-empty']
  card.body.forEach((element: any, i: number) => {
    if (!CARD_ELEMENTS.has(element?.type)) problems.push(`body[${i}]: unknown type ${element?.type}`)
    if (element?.type === 'TextBlock' && (typeof element.text !== 'string' || element.text === ''))
      problems.push(`body[${i}].text`)
    if (element?.type === 'FactSet')
      for (const fact of element.facts ?? [])
        if (typeof fact.title !== 'string' || typeof fact.value !== 'string')
          problems.push(`body[${i}].facts`)
  })
  for (const action of card.actions ?? [])
    if (action.type === 'Action.OpenUrl' && typeof action.url !== 'string')
      problems.push('Action.OpenUrl needs a url')
  return problems
}

function startReceiver(check: (body: any) => string[], success: () => Response): ChatReceiver {
  const arrivals: ChatArrival[] = []
  const failures: number[] = []
  const server: Server<undefined> = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const url = new URL(request.url)
      const contentType = request.headers.get('content-type') ?? ''
      let body: any = null
      const problems: string[] = []
      try {
        body = await request.json()
      } catch {
        problems.push('the body is not JSON')
      }
      if (!contentType.startsWith('application/json')) problems.push('Content-Type must be application/json')
      if (body !== null) problems.push(...check(body))
      const response =
        problems.length > 0
          ? new Response('invalid_payload', { status: 400 })
          : failures.length > 0
            ? new Response('failing', { status: failures.shift()! })
            : success()
      arrivals.push({ path: url.pathname, contentType, body, problems, status: response.status })
      return response
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}/hook`,
    arrivals,
    failNext(count, status) {
      for (let i = 0; i < count; i++) failures.push(status)
    },
    async stop() {
      await server.stop(true)
    },
  }
}

export const startSlackReceiver = () =>
  startReceiver(
    slackProblems,
    () => new Response('ok', { status: 200, headers: { 'content-type': 'text/plain' } }),
  )

export const startTeamsReceiver = () =>
  startReceiver(teamsProblems, () => new Response(null, { status: 202 }))
