import { Elysia } from 'elysia'
import type { ActiveSession } from '../../domain/accounts/sessions.ts'
import { endOtherSessions } from '../../domain/accounts/sessions.ts'
import { createToken, revokeToken } from '../../domain/accounts/use-cases.ts'
import { createEmbedKey, revokeEmbedKey } from '../../domain/embed/embed-key.ts'
import { newWebhookSecret } from '../../domain/webhooks/payload.ts'
import { formOf, type sessionPlugin } from '../../plugins/session.ts'
import { checkWebhookUrl } from '../routes/webhook-url.ts'
import { noteAccount, param, viewerOf } from './guards.ts'
import { invitationPages } from './invitation-pages.ts'
import { type FieldErrors, htmlResponse, messagePage, redirectTo } from './layout.ts'
import { memberPages } from './member-pages.ts'
import type { DashboardServices } from './services.ts'
import { apiSettingsView } from './settings-views.ts'

// /settings/api (tokens: create with a name and expiry, value shown once, list, revoke; embed keys;
// webhooks: URL, secret, test ping, recent deliveries, redeliver) and /settings/account (log out
// the other sessions here; the page itself, members and the switcher in member-pages.ts, the
// invitation links in invitation-pages.ts). docs/dashboard.md.

// What a redirect after a token or embed key action says. A token or key that is not the
// account's (or was revoked already) is said to be so, never reported as revoked.
const API_NOTICES: Record<string, string> = {
  'revoked=1': 'The token is revoked.',
  'revoked=none': 'No such token: it was revoked already, or it is not one of this account’s.',
  'embed_created=1': 'Embed key created. Copy its snippet below.',
  'embed_deleted=1': 'The embed key is deleted.',
  'embed_deleted=none': 'No such embed key: it was deleted already, or it is not one of this account’s.',
}

const WEBHOOK_NOTICES: Record<string, string> = {
  saved: 'The webhook URL is saved.',
  off: 'Webhooks are turned off (no URL).',
  rotated: 'The signing secret is rotated: the old one no longer works.',
  pinged: 'Test ping queued. It appears under Recent deliveries.',
  redelivered: 'Redelivery queued.',
  in_progress:
    'That delivery is still pending (its retries are running): redeliver it once it is delivered or failed.',
  no_url: 'No webhook URL is set: save one first.',
}

export function settingsPages(s: DashboardServices, sessions: ReturnType<typeof sessionPlugin>) {
  const apiPage = async (
    session: ActiveSession,
    extra: {
      created?: { name: string; value: string }
      form?: { name?: string; errors?: FieldErrors }
      embedForm?: { name?: string; origins?: string; errors?: FieldErrors }
      webhookForm?: { url?: string; errors?: FieldErrors }
      notice?: string | null
      status?: number
    } = {},
  ) => {
    const { webhookForm, ...rest } = extra
    const [tokens, embedKeys, settings, deliveries] = await Promise.all([
      s.tokens.list(session.accountId),
      s.embedKeys.list(session.accountId),
      s.webhooks?.getSettings(session.accountId) ?? null,
      s.webhooks?.listDeliveries(session.accountId, {}, { page: 1, perPage: 10 }) ?? null,
    ])
    const view = apiSettingsView({
      viewer: viewerOf(session),
      tokens,
      embedKeys,
      publicUrl: s.config.publicUrl,
      now: s.now(),
      webhook: { settings, deliveries: deliveries?.items ?? [], form: webhookForm },
      ...rest,
    })
    // The page that shows a new token's value must not be kept anywhere (no-store is on every page).
    return htmlResponse(view, { status: extra.status ?? 200 })
  }

  const unavailable = () => redirectTo('/settings/api#webhooks')

  return new Elysia({ name: 'dashboard:settings' })
    .use(sessions)
    .use(memberPages(s, sessions))
    .use(invitationPages(s, sessions))
    .get(
      '/settings/api',
      ({ session, query, request }) => {
        noteAccount(request, session)
        const notice =
          API_NOTICES[`revoked=${query.revoked}`] ??
          API_NOTICES[`embed_created=${query.embed_created}`] ??
          API_NOTICES[`embed_deleted=${query.embed_deleted}`] ??
          WEBHOOK_NOTICES[query.webhook ?? ''] ??
          null
        return apiPage(session, { notice })
      },
      { session: true },
    )
    .post(
      '/settings/api/tokens',
      async ({ session, body, request }) => {
        noteAccount(request, session)
        const form = formOf(body)
        const name = form.get('name') ?? ''
        const days = form.get('expires_in_days') ?? ''
        if (days !== '' && !/^\d{1,5}$/.test(days)) {
          const errors = { expires_in_days: ['Choose an expiry from the list.'] }
          return apiPage(session, { form: { name, errors }, status: 400 })
        }
        // Posted here (not redirected): the value exists only in this answer.
        // createToken looks the user's account up by email, which finds their oldest one: the
        // token must belong to the account this session is in (the switcher may have moved it).
        const inSession = {
          ...s.accounts,
          findMembershipByEmail: async () => ({
            userId: session.userId,
            accountId: session.accountId,
            email: session.email,
          }),
        }
        const created = await createToken(
          { ...s, accounts: inSession },
          {
            email: session.email,
            name,
            expiresInDays: days === '' ? undefined : Number(days),
            now: s.now(),
          },
        )
        if (!created.ok) {
          const errors = created.failure.code === 'validation_failed' ? created.failure.errors : {}
          return apiPage(session, { form: { name, errors }, status: 400 })
        }
        s.logger.info('token created', { account_id: session.accountId, token_id: created.value.token.id })
        return apiPage(session, { created: { name: created.value.token.name, value: created.value.value } })
      },
      { session: true, csrf: true },
    )
    .post(
      '/settings/api/tokens/:id/revoke',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        // Scoped by the session's account: another account's token id is simply not found.
        const revoked = await revokeToken(s, {
          accountId: session.accountId,
          tokenId: param(params.id),
          now: s.now(),
        })
        return redirectTo(revoked.ok ? '/settings/api?revoked=1' : '/settings/api?revoked=none')
      },
      { session: true, csrf: true },
    )
    .post(
      '/settings/api/embed-keys',
      async ({ session, body, request }) => {
        noteAccount(request, session)
        const form = formOf(body)
        const name = form.get('embed_name') ?? ''
        const origins = form.get('allowed_origins') ?? ''
        const created = await createEmbedKey(
          { embedKeys: s.embedKeys, random: s.random },
          {
            accountId: session.accountId,
            name,
            allowedOrigins: origins
              .split(/[\s,]+/)
              .map((origin) => origin.trim())
              .filter((origin) => origin !== ''),
          },
        )
        if (!created.ok) {
          const failed = created.failure.code === 'validation_failed' ? created.failure.errors : {}
          // The form's name field is embed_name (the token form already has `name`).
          const errors = Object.fromEntries(
            Object.entries(failed).map(([key, messages]) => [key === 'name' ? 'embed_name' : key, messages]),
          )
          return apiPage(session, { embedForm: { name, origins, errors }, status: 400 })
        }
        s.logger.info('embed key created', { account_id: session.accountId, embed_key_id: created.value.id })
        return redirectTo('/settings/api?embed_created=1')
      },
      { session: true, csrf: true },
    )
    .post(
      '/settings/api/embed-keys/:id/delete',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        // Scoped by the session's account: another account's key id is simply not found.
        const deleted = await revokeEmbedKey(s, {
          accountId: session.accountId,
          id: param(params.id),
          now: s.now(),
        })
        return redirectTo(deleted.ok ? '/settings/api?embed_deleted=1' : '/settings/api?embed_deleted=none')
      },
      { session: true, csrf: true },
    )
    .post(
      '/settings/api/webhook',
      async ({ session, body, request }) => {
        noteAccount(request, session)
        const store = s.webhooks
        if (store === null) return unavailable()
        const raw = (formOf(body).get('webhook_url') ?? '').trim()
        // The same check as PUT /api/v1/webhooks; an empty field turns webhooks off (url null).
        const checked = raw === '' ? null : await checkWebhookUrl(s.webhookUrl, raw)
        if (checked !== null && !checked.ok) {
          const failed = checked.failure.code === 'validation_failed' ? checked.failure.errors : {}
          const errors = { webhook_url: failed.url ?? ['The URL is refused.'] }
          return apiPage(session, { webhookForm: { url: raw, errors }, status: 400 })
        }
        const url = checked === null ? null : checked.value
        await store.putUrl(session.accountId, url, newWebhookSecret(s.random), s.now())
        s.logger.info('webhook url saved', { account_id: session.accountId, enabled: url !== null })
        return redirectTo(`/settings/api?webhook=${url === null ? 'off' : 'saved'}#webhooks`)
      },
      { session: true, csrf: true },
    )
    .post(
      '/settings/api/webhook/secret/rotate',
      async ({ session, request }) => {
        noteAccount(request, session)
        if (s.webhooks === null) return unavailable()
        await s.webhooks.rotateSecret(session.accountId, newWebhookSecret(s.random), s.now())
        s.logger.info('webhook secret rotated', { account_id: session.accountId })
        return redirectTo('/settings/api?webhook=rotated#webhooks')
      },
      { session: true, csrf: true },
    )
    .post(
      '/settings/api/webhook/test',
      async ({ session, request }) => {
        noteAccount(request, session)
        if (s.webhooks === null) return unavailable()
        const delivery = await s.webhooks.ping(session.accountId, s.now())
        return redirectTo(`/settings/api?webhook=${delivery === null ? 'no_url' : 'pinged'}#webhooks`)
      },
      { session: true, csrf: true },
    )
    .post(
      '/settings/api/webhook/deliveries/:id/redeliver',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        if (s.webhooks === null) return unavailable()
        // Scoped by the session's account: another account's delivery id is simply not found.
        const result = await s.webhooks.redeliver(session.accountId, param(params.id), s.now())
        if (result.kind === 'not_found')
          return messagePage({
            status: 404,
            title: 'Delivery not found',
            message: 'There is no such webhook delivery in your account.',
            viewer: viewerOf(session),
          })
        const outcome = result.kind === 'ok' ? 'redelivered' : result.kind
        return redirectTo(`/settings/api?webhook=${outcome}#webhooks`)
      },
      { session: true, csrf: true },
    )
    .post(
      '/settings/account/logout-others',
      async ({ session, request }) => {
        noteAccount(request, session)
        const ended = await endOtherSessions(s, { session })
        return redirectTo(`/settings/account?logged_out=${ended}`)
      },
      { session: true, csrf: true },
    )
}
