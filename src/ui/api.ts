/** The browser's side of the HTTP contract (src/schemas/http.ts). Nothing here knows about Lit. */
import type {
  AbortReceipt,
  CommandInfo,
  CommandReceipt,
  CreateThreadBody,
  DeliverAs,
  DialogAnswerBody,
  ModelList,
  PromptReceipt,
  ThreadSummary,
  UpdateThreadBody,
} from '../schemas/index.js'

/**
 * A refused request. Its message is what the server said (`refusal`, else `error`, e.g. a 422's
 * "no credentials for …"), so a component can show `err.message` to the user as it is.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: { error?: string; refusal?: string; [k: string]: unknown },
  ) {
    super(body.refusal ?? body.error ?? `HTTP ${status}`)
    this.name = 'ApiError'
  }
}

/** What a failed request means to a person: the server's own words, or that it could not be reached. */
export const UNREACHABLE = 'Cannot reach the server. Check the connection; nothing was lost.'

/** The browser's `fetch` failing outright (no answer at all) says only "Failed to fetch"; say what it means. */
export function isNetworkError(err: unknown): boolean {
  return err instanceof TypeError || (err instanceof Error && err.name === 'NetworkError')
}

export function describeError(err: unknown): string {
  if (isNetworkError(err)) return UNREACHABLE
  return err instanceof Error ? err.message : String(err)
}

/**
 * Where the API lives ('' = the page's own origin) and the bearer token, if the server wants one
 * (`--token`): open the page once as `/?token=<secret>`; it is kept in localStorage.
 */
export const apiConfig: { base: string; token: string } = { base: '', token: initialToken() }

function initialToken(): string {
  try {
    const fromUrl = new URLSearchParams(globalThis.location?.search ?? '').get('token')
    if (fromUrl) globalThis.localStorage?.setItem('threadhost.token', fromUrl)
    return fromUrl ?? globalThis.localStorage?.getItem('threadhost.token') ?? ''
  } catch {
    return ''
  }
}

/** Waits between tries of a keyed request that got no answer at all (a network error). */
export const RETRY_DELAYS_MS = [250, 1000, 3000]

/** A fresh `Idempotency-Key`: random, and made without `crypto.randomUUID`, which plain-http LAN pages lack. */
export function idempotencyKey(): string {
  const bytes = new Uint8Array(16)
  globalThis.crypto.getRandomValues(bytes)
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}

/**
 * A request that changes something, sent with a fresh `Idempotency-Key`. When no answer comes at all
 * (a network error: the request may or may not have reached the server) it is sent again with the
 * same key, so it runs at most once and the retry gets the first answer. An HTTP error is an answer:
 * it is never retried.
 */
async function once<T>(method: string, path: string, body?: unknown): Promise<T> {
  const key = idempotencyKey()
  for (let attempt = 0; ; attempt++) {
    try {
      return await request<T>(method, path, body, { 'idempotency-key': key })
    } catch (err) {
      if (!isNetworkError(err) || attempt >= RETRY_DELAYS_MS.length) throw err
      await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[attempt]))
    }
  }
}

async function request<T>(method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...extraHeaders }
  if (apiConfig.token) headers.authorization = `Bearer ${apiConfig.token}`
  const init: RequestInit = { method, headers }
  if (body !== undefined) {
    init.body = JSON.stringify(body)
    headers['content-type'] = 'application/json'
  }
  const res = await fetch(apiConfig.base + path, init)
  if (res.status === 204) return undefined as T
  const text = await res.text()
  let json: unknown = undefined
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    json = { error: text }
  }
  if (res.status === 401) {
    throw new ApiError(401, { error: 'this server needs a token: open the page as /?token=<secret>' })
  }
  if (!res.ok) throw new ApiError(res.status, (json as ApiError['body']) ?? {})
  return json as T
}

const enc = encodeURIComponent
const thread = (id: string) => `/api/threads/${enc(id)}`

export const api = {
  listThreads: () => request<{ threads: ThreadSummary[] }>('GET', '/api/threads').then((r) => r.threads),
  getThread: (id: string) => request<ThreadSummary>('GET', thread(id)),
  /** `demo` and every model pi has credentials for, and the name new threads get by default. */
  listModels: () => request<ModelList>('GET', '/api/models'),
  /** `model` (a `name` from listModels), `thinkingLevel` and `cwd` are optional: the server's defaults otherwise. */
  createThread: (body: CreateThreadBody = {}) => once<{ threadId: string }>('POST', '/api/threads', body),
  renameThread: (id: string, title: string) => request<ThreadSummary>('PATCH', thread(id), { title }),
  /** A title, model or thinking level; `409 busy` while a run is in flight, `422` an unusable model. */
  updateThread: (id: string, body: UpdateThreadBody) => request<ThreadSummary>('PATCH', thread(id), body),
  deleteThread: (id: string) => request<void>('DELETE', thread(id)),
  /** The thread's `/` commands: threadhost's own, then pi's (extensions, templates, skills). Builds a cold thread's runtime. */
  listCommands: (id: string): Promise<CommandInfo[]> =>
    request<{ commands: CommandInfo[] }>('GET', `${thread(id)}/commands`).then((r) => r.commands),
  /** The composer's draft, for extensions that read the editor; 404 (not live) is harmless. */
  reportDraft: (id: string, text: string) => request<void>('PUT', `${thread(id)}/draft`, { text }),
  prompt: (id: string, message: string, deliverAs?: DeliverAs) =>
    once<PromptReceipt | CommandReceipt>('POST', `${thread(id)}/prompt`, deliverAs ? { message, deliverAs } : { message }),
  // An empty JSON object: the server's body parser refuses a bodiless POST (see the report).
  /** `run`: the run this tab is looking at, so a tab that fell behind can never stop a newer one. */
  abort: (id: string, run?: number) => once<AbortReceipt>('POST', `${thread(id)}/abort`, run !== undefined ? { run } : {}),
  answerDialog: (id: string, body: DialogAnswerBody) => once<void>('POST', `${thread(id)}/dialog`, body),
  followUrl: (id: string, after = 0) => {
    // EventSource cannot send headers: the token rides in the query.
    const q = new URLSearchParams()
    if (after > 0) q.set('after', String(after))
    if (apiConfig.token) q.set('token', apiConfig.token)
    const qs = q.toString()
    return `${apiConfig.base}${thread(id)}/follow${qs ? `?${qs}` : ''}`
  },
}
export type Api = typeof api
