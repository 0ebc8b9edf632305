import type { SMTPServer, SMTPServerSession } from 'smtp-server'
import type { Logger } from '../../domain/shared/logger.ts'

// What bounds the SMTP listener's connections beyond smtp-server's own idle timeout and maxClients
// (infrastructure/mail/smtp-listener.ts): a deadline per session. The cap per client is
// infrastructure/runtime/connections-per-client.ts.

/**
 * Ends each connection at its deadline with 421 (RFC 5321 §3.8: the server may close with 421 and
 * the client retries later). A message whose 250 was lost with it is sent again and deduplicated.
 */
export function sessionDeadlines(connections: () => SMTPServer['connections'], ms: number, logger: Logger) {
  const timers = new Map<string, ReturnType<typeof setTimeout>>()
  return {
    start(session: SMTPServerSession) {
      const timer = setTimeout(() => {
        timers.delete(session.id)
        const connection = [...connections()].find((open) => open.id === session.id)
        if (connection === undefined) return
        logger.info('smtp connection closed at its deadline', {
          session: session.id,
          client: session.remoteAddress,
        })
        connection.send(421, 'Session time limit exceeded, closing connection')
        connection.close()
      }, ms)
      timer.unref?.()
      timers.set(session.id, timer)
    },
    stop(session: SMTPServerSession) {
      clearTimeout(timers.get(session.id))
      timers.delete(session.id)
    },
  }
}
