import { fail, ok, type Result } from '../shared/result.ts'
import type { AlertStore, StoredAlert } from './ports.ts'

// The alerts API's use cases (docs/alerts.md): an alert of another account is not found, as an
// unknown one.

const found = (alert: StoredAlert | null): Result<StoredAlert> =>
  alert === null ? fail({ code: 'not_found', resource: 'alert' }) : ok(alert)

export async function getAlert(
  deps: { alerts: Pick<AlertStore, 'get'> },
  input: { accountId: string; number: number },
): Promise<Result<StoredAlert>> {
  return found(await deps.alerts.get(input.accountId, input.number))
}

/** Resolves by the user; an alert already resolved comes back unchanged and sends nothing. */
export async function resolveAlert(
  deps: { alerts: Pick<AlertStore, 'resolve'>; now: () => Date },
  input: { accountId: string; number: number },
): Promise<Result<StoredAlert>> {
  return found(await deps.alerts.resolve(input.accountId, input.number, deps.now()))
}
