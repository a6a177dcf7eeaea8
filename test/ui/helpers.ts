/** Doubles for the browser component tests: a scriptable EventSource and an API of spies. */
import { vi } from 'vitest'
import type {
  ModelInfo,
  ModelList,
  Observation,
  ObservationInput,
  OpenDialog,
  Snapshot,
  ThreadSummary,
  UpdateThreadBody,
} from '../../src/schemas/index.js'
import { initialView } from '../../src/shared/projection.js'
import type { Api } from '../../src/ui/api.js'
import type { ThreadPane } from '../../src/ui/thread-pane.js'

export class FakeEventSource extends EventTarget {
  static instances: FakeEventSource[] = []
  static last(): FakeEventSource {
    const es = FakeEventSource.instances.at(-1)
    if (!es) throw new Error('no EventSource was opened')
    return es
  }
  readyState = 0
  closed = false
  onopen: ((e: Event) => void) | null = null
  onerror: ((e: Event) => void) | null = null
  onmessage: ((e: MessageEvent) => void) | null = null
  constructor(readonly url: string) {
    super()
    FakeEventSource.instances.push(this)
  }
  close() {
    this.readyState = 2
    this.closed = true
  }
  open() {
    this.readyState = 1
    this.onopen?.(new Event('open'))
  }
  snapshot(s: Snapshot) {
    this.dispatchEvent(new MessageEvent('snapshot', { data: JSON.stringify(s), lastEventId: String(s.seq) }))
  }
  frame(o: Observation) {
    this.dispatchEvent(new MessageEvent(o.type, { data: JSON.stringify(o), lastEventId: String(o.seq) }))
  }
  fail() {
    this.onerror?.(new Event('error'))
  }
}

export const fakeEventSource = (url: string) => new FakeEventSource(url) as unknown as EventSource

/** Numbers observations like a feed does. */
export function feed(start = 1) {
  let seq = start - 1
  return (o: ObservationInput): Observation => ({ ...o, seq: ++seq }) as Observation
}

export function snapshotOf(threadId: string, patch: Partial<Snapshot> = {}): Snapshot {
  return { ...initialView(threadId, [], 0, true), ...patch }
}

export const confirmDialog = (id = 'd1', title = 'Deploy?'): OpenDialog => ({
  id,
  dialog: { method: 'confirm', title, message: 'to prod' },
  origin: { kind: 'tool', name: 'ui_dialog' },
})

export function summary(threadId: string, patch: Partial<ThreadSummary> = {}): ThreadSummary {
  return {
    threadId,
    title: threadId,
    model: 'demo',
    cwd: '/work/project',
    live: true,
    busy: false,
    run: 0,
    openDialogs: 0,
    createdAt: Date.now() - 60_000,
    updatedAt: Date.now() - 30_000,
    ...patch,
  }
}

export function model(name: string, patch: Partial<ModelInfo> = {}): ModelInfo {
  const [provider, id] = name.includes('/') ? name.split('/', 2) : ['demo', name]
  return { name, provider, id, label: name, reasoning: false, contextWindow: 128_000, ...patch }
}

export const demoModels = (): ModelList => ({ models: [model('demo', { label: 'Demo (offline)' })], default: 'demo' })

export function fakeApi(overrides: Partial<Api> = {}): Api & { [K in keyof Api]: ReturnType<typeof vi.fn> } {
  const api = {
    listThreads: vi.fn(async () => []),
    getThread: vi.fn(async (id: string) => summary(id)),
    listModels: vi.fn(async () => demoModels()),
    listExtensions: vi.fn(async () => ({ loaded: [], failed: [], clashes: [] })),
    createThread: vi.fn(async () => ({ threadId: 'new-1' })),
    listWorkspaces: vi.fn(async () => ({ roots: ['/work/project'], default: '/work/project' })),
    searchThreads: vi.fn(async () => []),
    renameThread: vi.fn(async (id: string, title: string) => summary(id, { title })),
    updateThread: vi.fn(async (id: string, body: UpdateThreadBody) => summary(id, body)),
    deleteThread: vi.fn(async () => undefined),
    prompt: vi.fn(async (id: string) => ({ threadId: id, messageId: 'm1', run: 1, queued: false })),
    reportDraft: vi.fn(async () => undefined),
    runShortcut: vi.fn(async () => undefined),
    listCommands: vi.fn(async () => [
      { name: 'name', description: 'Rename this thread', kind: 'threadhost' as const },
      { name: 'model', description: 'Change the model', kind: 'threadhost' as const },
      { name: 'new', description: 'Start a new thread', kind: 'threadhost' as const },
    ]),
    abort: vi.fn(async (id: string) => ({ threadId: id, restored: [] as string[] })),
    takeQueue: vi.fn(async (id: string) => ({ threadId: id, restored: [] as string[] })),
    answerDialog: vi.fn(async () => undefined),
    followUrl: (id: string, after = 0) => `/api/threads/${id}/follow${after > 0 ? `?after=${after}` : ''}`,
    ...overrides,
  }
  return api as never
}

export async function until(check: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** A thread pane on the page, following through a fake EventSource (the test imports the component). */
export function mountPane(api = fakeApi(), threadId = 't1', patch: Partial<ThreadPane> = {}) {
  const el = document.createElement('thread-pane') as ThreadPane
  el.api = api
  el.eventSource = fakeEventSource
  el.threadId = threadId
  el.style.height = '600px'
  Object.assign(el, patch)
  document.body.append(el)
  return { el, api, es: () => FakeEventSource.last() }
}
