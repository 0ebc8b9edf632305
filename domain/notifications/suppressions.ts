import { CONTROL_CHARACTERS } from '../shared/control-characters.ts'
import type { Page, PageRequest } from '../shared/pagination.ts'
import { fail, invalid, ok, type Result } from '../shared/result.ts'
import type { MailSuppression, MailSuppressionList } from './mail-ports.ts'
import { normaliseRecipient } from './send-mail.ts'

// An account's mail suppressions (docs/notifications.md, "Unsubscribe"): the addresses that
// unsubscribed from a kind of mail, or bounced permanently, listed so that a member can see why a
// colleague gets nothing, and lifted when the address is to be mailed again (a mailbox fixed after
// a bounce, an unsubscribe by mistake). A lifted address is mailed again from the next mail on;
// an unsubscribe link in an older mail still works.

const MAX_ADDRESS_LENGTH = 254

export function listSuppressions(
  deps: { suppressions: MailSuppressionList },
  input: { accountId: string; page: PageRequest },
): Promise<Page<MailSuppression>> {
  return deps.suppressions.list(input.accountId, input.page)
}

export async function liftSuppression(
  deps: { suppressions: MailSuppressionList },
  input: { accountId: string; recipient: string; kind: MailSuppression['kind'] | null },
): Promise<Result<{ lifted: number }>> {
  const recipient = normaliseRecipient(input.recipient)
  // An address as stored (at most 254 characters, one line): anything else was never suppressed.
  if (recipient === '' || recipient.length > MAX_ADDRESS_LENGTH || CONTROL_CHARACTERS.test(recipient))
    return invalid('address', 'The address must be an email address on one line, at most 254 characters.')
  const lifted = await deps.suppressions.lift(input.accountId, recipient, input.kind)
  return lifted === 0 ? fail({ code: 'not_found', resource: 'mail suppression' }) : ok({ lifted })
}
