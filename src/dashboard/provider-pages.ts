import { Elysia } from 'elysia'
import type { ActiveSession } from '../../domain/accounts/sessions.ts'
import { PROVIDER_KINDS, type ProviderKind } from '../../domain/dns-providers/credentials.ts'
import type { ProviderDeps } from '../../domain/dns-providers/imports.ts'
import { MAX_IMPORT_ZONES } from '../../domain/dns-providers/imports.ts'
import type { ProviderError } from '../../domain/dns-providers/ports.ts'
import { normalizeName } from '../../domain/dns-providers/record-set.ts'
import {
  authenticateProvider,
  type Connection,
  deleteConnection,
  LABELS,
  type ProviderProblem,
} from '../../domain/dns-providers/use-cases.ts'
import { getDomain } from '../../domain/domains/use-cases.ts'
import { mapBounded } from '../../domain/shared/map-bounded.ts'
import type { Failure } from '../../domain/shared/result.ts'
import { formOf, type sessionPlugin } from '../../plugins/session.ts'
import { noteAccount, param, viewerOf } from './guards.ts'
import { type FieldErrors, htmlResponse, messagePage, redirectTo } from './layout.ts'
import {
  CONNECT_FORMS,
  type ConnectForm,
  importChoiceView,
  importProgressView,
  providerListView,
  removeConnectionView,
  type ZoneChoice,
} from './provider-views.ts'
import type { DashboardServices } from './services.ts'

// /dns-providers (issue #7, #8): connect a provider (the credentials checked with it, then sealed),
// remove a connection, pick zones to import and follow the import job's progress. The same use
// cases and stores as /api/v1/dns-providers (src/routes/dns-providers.ts), built the same way.

/** How often the progress page of a running import reloads itself (no script needed). */
const REFRESH_SECONDS = 2

const secretKeyOf = (kind: ProviderKind) => CONNECT_FORMS[kind].fields.find((f) => f.secret)!.key

/** What the connect form posted: the API's `credentials`, and what to fill back in (never the secret). */
function credentialsOf(kind: ProviderKind, form: URLSearchParams) {
  const values: Record<string, string> = { name: (form.get('name') ?? '').trim() }
  const credentials: Record<string, unknown> = {}
  for (const f of CONNECT_FORMS[kind].fields) {
    const value = form.get(f.key) ?? ''
    if (f.secret) credentials[f.key] = value
    else credentials[f.key] = values[f.key] = value.trim()
  }
  if (kind === 'rfc2136') {
    // The API takes `server` as host[:port] ([v6]:port) and `zones` as a list; the form asks for
    // host and port apart and the zones one a line.
    const { server: host = '', port = '', zones = '' } = values
    credentials.server = port === '' ? host : `${host.includes(':') ? `[${host}]` : host}:${port}`
    credentials.zones = zones.split(/[\s,]+/).filter((zone) => zone !== '')
  }
  return { values, credentials }
}

/** A refused connect form: the messages keyed by field id (`<kind>-<key>`), and the status. */
function connectErrors(kind: ProviderKind, failure: Failure | ProviderProblem) {
  const id = (key: string) => `${kind}-${key}`
  switch (failure.code) {
    case 'validation_failed': {
      const errors: FieldErrors = {}
      for (const [key, messages] of Object.entries(failure.errors))
        errors[id(key === 'credentials' ? 'form' : key.replace(/^credentials\./, ''))] = messages
      return { errors, status: 400 }
    }
    case 'dns_provider_authentication_failed': {
      const message =
        kind === 'rfc2136'
          ? 'The server refused the TSIG key: check its name, secret and algorithm, and that it may update every zone listed.'
          : `${LABELS[kind]} rejected these credentials: check the ${kind === 'powerdns' ? 'API key' : 'API token'} and its permissions.`
      return { errors: { [id(secretKeyOf(kind))]: [message] }, status: 400 }
    }
    case 'dns_provider_error':
      return { errors: { [id('form')]: [failure.message] }, status: 502 }
    default:
      return { errors: { [id('form')]: ['The connection could not be made. Try again.'] }, status: 400 }
  }
}

function providerTrouble(provider: ProviderKind, error: ProviderError): string {
  return error.kind === 'bad_credentials' || error.kind === 'forbidden'
    ? `${LABELS[provider]} no longer accepts the stored credentials: remove this connection and connect again.`
    : `${LABELS[provider]}: ${error.message}`
}

export function providerPages(s: DashboardServices, sessions: ReturnType<typeof sessionPlugin>) {
  const useCases: ProviderDeps | null = s.providers
  const { imports } = s.providers
  const importsAvailable = s.boss !== null && useCases !== null

  const missing = (session: ActiveSession, what = 'DNS provider connection') =>
    messagePage({
      status: 404,
      title: 'Not found',
      message: `This ${what} is not in your account.`,
      viewer: viewerOf(session),
    })
  const unavailable = (session: ActiveSession, message: string) =>
    messagePage({ status: 503, title: 'Not available', message, viewer: viewerOf(session) })
  const noImports = (session: ActiveSession) =>
    unavailable(session, 'Imports are unavailable on this server: no job queue runs in this process.')
  const connectionOf = async (session: ActiveSession, id: string) =>
    useCases === null ? null : useCases.connections.get(session.accountId, id)

  const listPage = async (
    session: ActiveSession,
    extra: { form?: ConnectForm; notice?: string | null; status?: number } = {},
  ) => {
    const connections = useCases === null ? [] : await useCases.connections.all(session.accountId)
    const view = providerListView({
      viewer: viewerOf(session),
      connections,
      available: useCases !== null,
      importsAvailable,
      form: extra.form,
      notice: extra.notice,
    })
    return htmlResponse(view, { status: extra.status ?? 200 })
  }

  /** The zones of a connection, those already in the account marked; the provider asked live. */
  const choicePage = async (session: ActiveSession, connection: Connection, error?: string) => {
    const opened = await useCases!.open(connection)
    const zones = opened.ok ? await opened.value.listZones() : opened
    if (!zones.ok)
      return messagePage({
        status: 502,
        title: 'The zones could not be listed',
        message: providerTrouble(connection.provider, zones.failure),
        viewer: viewerOf(session),
      })
    const names = zones.value.map((zone) => zone.name).sort((a, b) => a.localeCompare(b))
    const choices = await mapBounded(names, 8, async (name): Promise<ZoneChoice> => {
      if (name === 'arpa' || name.endsWith('.arpa')) return { name, present: 'reverse' }
      const found = await getDomain(s, session.accountId, name)
      return { name, present: found.ok ? 'domain' : null }
    })
    const view = importChoiceView({ viewer: viewerOf(session), connection, zones: choices, error })
    return htmlResponse(view, { status: error ? 400 : 200 })
  }

  return new Elysia({ name: 'dashboard:dns-providers' })
    .use(sessions)
    .get(
      '/dns-providers',
      ({ session, query, request }) => {
        noteAccount(request, session)
        const q = query as Record<string, string | undefined>
        const notice =
          q.connected === '1'
            ? 'The provider is connected. Import its zones as domains below.'
            : q.removed === '1'
              ? 'The connection is removed and its credentials forgotten.'
              : null
        return listPage(session, { notice })
      },
      { session: true },
    )
    .post(
      '/dns-providers/connect',
      async ({ session, body, request }) => {
        noteAccount(request, session)
        if (useCases === null) return unavailable(session, 'DNS providers are not available on this server.')
        const form = formOf(body)
        const kind = form.get('provider') ?? ''
        if (!(PROVIDER_KINDS as readonly string[]).includes(kind)) return listPage(session, { status: 400 })
        const provider = kind as ProviderKind
        const { values, credentials } = credentialsOf(provider, form)
        const back = (refused: { errors: FieldErrors; status: number }) =>
          listPage(session, {
            form: { kind: provider, values, errors: refused.errors },
            status: refused.status,
          })
        if (provider === 'rfc2136' && !/^(\d{1,5})?$/.test(values.port ?? ''))
          return back({ errors: { 'rfc2136-port': ['The port is a number such as 53.'] }, status: 400 })
        const result = await authenticateProvider(useCases, {
          accountId: session.accountId,
          provider,
          name: values.name,
          credentials,
        })
        if (!result.ok) return back(connectErrors(provider, result.failure))
        s.logger.info('dns provider connected', {
          account_id: session.accountId,
          connection_id: result.value.id,
          provider,
        })
        return redirectTo('/dns-providers?connected=1')
      },
      { session: true, csrf: true },
    )
    .get(
      '/dns-providers/:id/delete',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        const connection = await connectionOf(session, param(params.id))
        if (connection === null) return missing(session)
        return htmlResponse(removeConnectionView({ viewer: viewerOf(session), connection }))
      },
      { session: true },
    )
    .post(
      '/dns-providers/:id/delete',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        if (useCases === null) return missing(session)
        const removed = await deleteConnection(useCases, session.accountId, param(params.id))
        if (!removed.ok) return missing(session)
        s.logger.info('dns provider removed', { account_id: session.accountId, connection_id: params.id })
        return redirectTo('/dns-providers?removed=1')
      },
      { session: true, csrf: true },
    )
    .get(
      '/dns-providers/:id/import',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        if (!importsAvailable) return noImports(session)
        const connection = await connectionOf(session, param(params.id))
        if (connection === null) return missing(session)
        return choicePage(session, connection)
      },
      { session: true },
    )
    .post(
      '/dns-providers/:id/import',
      async ({ session, params, body, request }) => {
        noteAccount(request, session)
        if (!importsAvailable) return noImports(session)
        const connection = await connectionOf(session, param(params.id))
        if (connection === null) return missing(session)
        const zones = [...new Set(formOf(body).getAll('zones').map(normalizeName))].filter((z) => z !== '')
        if (zones.length === 0) return choicePage(session, connection, 'Choose at least one zone to import.')
        if (zones.length > MAX_IMPORT_ZONES)
          return choicePage(session, connection, `Choose at most ${MAX_IMPORT_ZONES} zones at a time.`)
        // The checkboxes only send listed zones; anything longer than a DNS name is not one (RFC 1035 §2.3.4).
        if (zones.some((zone) => zone.length > 253))
          return choicePage(session, connection, 'Choose zones from the list.')
        const created = await imports.create(session.accountId, {
          connectionId: connection.id,
          zones,
          now: s.now(),
        })
        return redirectTo(`/dns-providers/imports/${created.id}`)
      },
      { session: true, csrf: true },
    )
    .get(
      '/dns-providers/imports/:id',
      async ({ session, params, request }) => {
        noteAccount(request, session)
        // Scoped by the session's account: another account's import is simply not found.
        const job = await imports.get(session.accountId, param(params.id))
        if (job === null) return missing(session, 'domain import')
        const connection = await connectionOf(session, job.connectionId)
        const running = job.status === 'queued' || job.status === 'running'
        return htmlResponse(
          importProgressView({
            viewer: viewerOf(session),
            job,
            connectionName: connection?.name ?? null,
            // Reloads itself while the job runs: live progress without script, under the CSP.
            refreshSeconds: running ? REFRESH_SECONDS : undefined,
          }),
        )
      },
      { session: true },
    )
}
