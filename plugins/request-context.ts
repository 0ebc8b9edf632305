// Per-request facts that hooks at different lifecycle stages need (request id, start time), keyed
// by the Request object so they also reach error responses raised before any handler ran.

export interface RequestFacts {
  id: string
  startedAt: number
  accountId?: string
}

const facts = new WeakMap<Request, RequestFacts>()

export const requestFacts = (request: Request): RequestFacts | undefined => facts.get(request)
export const rememberFacts = (request: Request, value: RequestFacts): void => {
  facts.set(request, value)
}
