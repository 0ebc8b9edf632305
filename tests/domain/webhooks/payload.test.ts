import { expect, test } from 'bun:test'
import {
  looksLikeWebhookSecret,
  newWebhookSecret,
  webhookBody,
  webhookDeliveryId,
} from '../../../domain/webhooks/payload.ts'

test('the body is exactly {"event","timestamp","data"} in that order, with the attempt time in UTC', () => {
  const body = webhookBody(
    {
      type: 'alert.created',
      data: { alert_id: 7, domain: 'example.com', severity: 'high', title: 'SPF fails' },
    },
    new Date('2026-03-01T10:00:05.123+02:00'),
  )
  expect(body).toBe(
    '{"event":"alert.created","timestamp":"2026-03-01T08:00:05.123Z","data":' +
      '{"alert_id":7,"domain":"example.com","severity":"high","title":"SPF fails"}}',
  )
  expect(Object.keys(JSON.parse(body))).toEqual(['event', 'timestamp', 'data'])
})

test('each attempt gets its own timestamp; event and data stay the same', () => {
  const event = {
    type: 'domain.verified',
    data: { domain: 'example.com', verified_at: '2026-03-01T10:00:00.000Z' },
  }
  const first = JSON.parse(webhookBody(event, new Date('2026-03-01T10:00:00Z')))
  const last = JSON.parse(webhookBody(event, new Date('2026-03-01T11:00:00Z')))
  expect(first.timestamp).toBe('2026-03-01T10:00:00.000Z')
  expect(last.timestamp).toBe('2026-03-01T11:00:00.000Z')
  expect(last.data).toEqual(first.data)
})

test('secrets are whsec_ + 43 base64url characters of 32 random bytes', () => {
  const asked: number[] = []
  const secret = newWebhookSecret((n) => {
    asked.push(n)
    return new Uint8Array(n).fill(0xff)
  })
  expect(asked).toEqual([32])
  expect(secret).toBe(`whsec_${'_'.repeat(42)}8`) // 252 one bits, then 1111 padded with 00
  expect(looksLikeWebhookSecret(secret)).toBe(true)
  const counting = newWebhookSecret((n) => Uint8Array.from({ length: n }, (_, i) => i * 8))
  expect(counting).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
  expect(counting).not.toContain('=')
  expect(() => newWebhookSecret(() => new Uint8Array(16))).toThrow()
})

test('looksLikeWebhookSecret rejects other shapes', () => {
  expect(looksLikeWebhookSecret('whsec_short')).toBe(false)
  expect(looksLikeWebhookSecret(`dw_${'a'.repeat(43)}`)).toBe(false)
  expect(looksLikeWebhookSecret(`whsec_${'a'.repeat(42)}=`)).toBe(false)
})

test('the delivery id is the outbox event id, normalised, and anything else is a programming error', () => {
  expect(webhookDeliveryId('3F2504E0-4F89-41D3-9A0C-0305E82C3301')).toBe(
    '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
  )
  expect(() => webhookDeliveryId('42')).toThrow()
  expect(() => webhookDeliveryId('')).toThrow()
})
