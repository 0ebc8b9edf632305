import { expect, test } from 'bun:test'
import { signWebhook, verifyWebhook } from '../../../infrastructure/http/webhook-signature.ts'
import { verifyDelivery } from '../../support/webhook-receiver.ts'

test('HMAC-SHA256 in lowercase hex (RFC 4231 test case 2)', async () => {
  expect(await signWebhook('Jefe', 'what do ya want for nothing?')).toBe(
    '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
  )
})

test('the key is the whole secret string, prefix included, as UTF-8', async () => {
  const body = '{"event":"domain.verified"}'
  const withPrefix = await signWebhook('whsec_abc', body)
  expect(withPrefix).not.toBe(await signWebhook('abc', body))
  expect(await signWebhook('whsec_é', body)).not.toBe(await signWebhook('whsec_e', body))
})

test('verifyWebhook accepts its own signatures and nothing else', async () => {
  const secret = 'whsec_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG'
  const body = '{"event":"alert.created","timestamp":"2026-03-01T10:00:00.000Z","data":{}}'
  const signature = await signWebhook(secret, body)
  expect(signature).toMatch(/^[0-9a-f]{64}$/)
  expect(await verifyWebhook(secret, body, signature)).toBe(true)
  expect(await verifyWebhook(secret, body, signature.toUpperCase())).toBe(true)
  expect(await verifyWebhook(secret, `${body} `, signature)).toBe(false)
  expect(await verifyWebhook(`${secret}x`, body, signature)).toBe(false)
  const flipped = (signature[0] === '0' ? '1' : '0') + signature.slice(1)
  expect(await verifyWebhook(secret, body, flipped)).toBe(false)
  for (const junk of ['', signature.slice(2), `${signature}00`, `sha256=${signature}`, 'z'.repeat(64)])
    expect(await verifyWebhook(secret, body, junk)).toBe(false)
})

test('the documented receiver code accepts what signWebhook makes', async () => {
  const secret = 'whsec_receiver'
  const sentAt = new Date('2026-03-01T10:00:00Z')
  const body = JSON.stringify({ event: 'spf.activated', timestamp: sentAt.toISOString(), data: {} })
  const signature = await signWebhook(secret, body)
  expect(await verifyDelivery(secret, body, signature, new Date('2026-03-01T10:04:59Z'))).toBe(true)
  expect(await verifyDelivery(secret, body, signature, new Date('2026-03-01T09:55:01Z'))).toBe(true)
  // Outside the 5 minute tolerance: a replay.
  expect(await verifyDelivery(secret, body, signature, new Date('2026-03-01T10:05:01Z'))).toBe(false)
  expect(await verifyDelivery('whsec_other', body, signature, sentAt)).toBe(false)
})
