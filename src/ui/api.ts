/** The browser's side of the HTTP contract (src/schemas/http.ts). Nothing here knows about Lit. */
import type {
  AbortReceipt,
  DeliverAs,
  DialogAnswerBody,
  PromptReceipt,
  ThreadSummary,
} from '../schemas/index.js'

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: { error?: string; refusal?: string; [k: string]: unknown },
  ) {
    super(body.refusal ?? body.error ?? `HTTP ${status}`)
    this.name = 'ApiError'
  }
}

/** Where the API lives; '' means the page's own origin. Tests may point it elsewhere. */
export const apiConfig = { base: '' }

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, headers: { accept: 'application/json' } }
  if (body !== undefined) {
    init.body = JSON.stringify(body)
    init.headers = { ...init.headers, 'content-type': 'application/json' }
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
  if (!res.ok) throw new ApiError(res.status, (json as ApiError['body']) ?? {})
  return json as T
}

const enc = encodeURIComponent
const thread = (id: string) => `/api/threads/${enc(id)}`

export const api = {
  listThreads: () => request<{ threads: ThreadSummary[] }>('GET', '/api/threads').then((r) => r.threads),
  getThread: (id: string) => request<ThreadSummary>('GET', thread(id)),
  createThread: (body: { id?: string; title?: string; model?: string } = {}) =>
    request<{ threadId: string }>('POST', '/api/threads', body),
  renameThread: (id: string, title: string) => request<ThreadSummary>('PATCH', thread(id), { title }),
  deleteThread: (id: string) => request<void>('DELETE', thread(id)),
  prompt: (id: string, message: string, deliverAs?: DeliverAs) =>
    request<PromptReceipt>('POST', `${thread(id)}/prompt`, deliverAs ? { message, deliverAs } : { message }),
  abort: (id: string) => request<AbortReceipt>('POST', `${thread(id)}/abort`),
  answerDialog: (id: string, body: DialogAnswerBody) => request<void>('POST', `${thread(id)}/dialog`, body),
  followUrl: (id: string, after = 0) =>
    `${apiConfig.base}${thread(id)}/follow${after > 0 ? `?after=${after}` : ''}`,
}
export type Api = typeof api
