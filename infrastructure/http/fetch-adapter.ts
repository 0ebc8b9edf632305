import type { HttpClient } from './guarded-client.ts'

/**
 * The client as a `fetch` for libraries that take one (jose's remote key set). The body handed
 * back is the capped one; encodings are gone (the body is already decoded), so only the media type
 * is kept.
 */
export function asFetch(client: HttpClient): typeof fetch {
  const guarded = async (input: string | URL | Request, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input)
    const headers: Record<string, string> = {}
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value
    })
    const answer = await client.request(url, {
      method: init?.method ?? 'GET',
      headers,
      redirect: init?.redirect === 'follow' ? 'follow' : init?.redirect === 'manual' ? 'manual' : 'error',
    })
    const type = answer.headers.get('content-type')
    return new Response(answer.status === 204 || answer.status === 304 ? null : (answer.body as BodyInit), {
      status: answer.status,
      headers: type === null ? {} : { 'content-type': type },
    })
  }
  return guarded as typeof fetch
}
