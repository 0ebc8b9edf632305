import type { OutboundError } from '../../../infrastructure/http/outbound-error.ts'

/** The error a guarded request was refused with; a request that succeeds fails the test. */
export async function failureOf(promise: Promise<unknown>): Promise<OutboundError> {
  try {
    await promise
  } catch (error) {
    return error as OutboundError
  }
  throw new Error('expected the request to fail')
}
