import { fail, type Result } from '../shared/result.ts'

// The email branch of POST /notifications/test (docs/notifications.md): the mail side implements
// this port; until a sender is composed, the API answers 503 `email_not_configured`.

export interface TestEmailOutcome {
  status: 'delivered' | 'failed' | 'queued'
  outcome: string
  recipients: string[]
}

export interface TestEmailSender {
  /**
   * Sends (or queues) a test email to the account's alert recipients now. `outcome` is a short
   * sentence for the user (`250 accepted`, `queued: sent by the worker within a minute`).
   */
  sendTest(input: { accountId: string }): Promise<Result<TestEmailOutcome>>
}

/** The sender of an installation that sends no notification mail yet. */
export const noTestEmail: TestEmailSender = {
  async sendTest() {
    return fail({
      code: 'email_not_configured',
      message: 'This installation does not send notification emails yet, so no test email can be sent.',
    })
  },
}
