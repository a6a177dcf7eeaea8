/** Test doubles for the runtime suite: a scriptable UiBridge and an event recorder. */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Provider } from '@earendil-works/pi-ai'
import type { ExtensionFactory } from '@earendil-works/pi-coding-agent'
import type { NotifyLevel, QuestionnaireQuestion, WidgetPlacement, WorkingState } from '../../src/schemas/index.js'
import { createPiRuntimeFactory, PiModels, type RuntimeLogger, type ToolPolicy } from '../../src/runtime/index.js'
import type {
  AgentRuntime,
  QueuedPrompt,
  RuntimeFactory,
  RuntimeOptions,
  AskUserResult,
  DialogRequest,
  DialogResolution,
  RuntimeEvent,
  UiBridge,
} from '../../src/runtime/port.js'

interface Pending<Req, Res> {
  request: Req
  settled: boolean
  resolve(result: Res): void
}

export interface AskUserRequest {
  question: QuestionnaireQuestion
  options: { signal?: AbortSignal; toolCallId?: string }
}

/** Records every ask; the test answers them. An aborted request signal settles it `aborted`, as the host does. */
export class FakeBridge implements UiBridge {
  readonly asks: Array<Pending<DialogRequest, DialogResolution>> = []
  readonly questions: Array<Pending<AskUserRequest, AskUserResult>> = []
  readonly notes: Array<{ message: string; level: NotifyLevel }> = []
  private wake: Array<() => void> = []

  ask(request: DialogRequest): Promise<DialogResolution> {
    return this.park(this.asks, request, request.signal, { outcome: 'aborted' })
  }

  askUser(question: QuestionnaireQuestion, options: { signal?: AbortSignal; toolCallId?: string }): Promise<AskUserResult> {
    return this.park(this.questions, { question, options }, options.signal, { status: 'cancelled' })
  }

  notify(message: string, level: NotifyLevel): void {
    this.notes.push({ message, level })
  }

  /** Every fire-and-forget call but notify, in order, as `[method, ...args]`. */
  readonly shown: unknown[][] = []
  setStatus(key: string, text: string | undefined): void {
    this.shown.push(['setStatus', key, text])
  }
  setWidget(key: string, lines: string[] | undefined, placement?: WidgetPlacement): void {
    this.shown.push(placement ? ['setWidget', key, lines, placement] : ['setWidget', key, lines])
  }
  setWorking(working: WorkingState): void {
    this.shown.push(['setWorking', working])
  }
  setTitle(title: string): void {
    this.shown.push(['setTitle', title])
  }
  editorText(): string {
    const last = this.shown.findLast((call) => call[0] === 'setEditorText')
    return (last?.[1] as string | undefined) ?? ''
  }

  setEditorText(text: string): void {
    this.shown.push(['setEditorText', text])
  }

  /** Waits until the n-th (0-based) dialog has been asked. */
  nthAsk(n: number) {
    return this.until(() => this.asks[n])
  }

  nthQuestion(n: number) {
    return this.until(() => this.questions[n])
  }

  /** What the host does after abort starts: every open dialog settles `aborted`. */
  settleAllAborted(): void {
    for (const a of this.asks) a.resolve({ outcome: 'aborted' })
    for (const q of this.questions) q.resolve({ status: 'cancelled' })
  }

  private park<Req, Res>(list: Array<Pending<Req, Res>>, request: Req, signal: AbortSignal | undefined, onAbort: Res) {
    return new Promise<Res>((resolve) => {
      const entry: Pending<Req, Res> = {
        request,
        settled: false,
        resolve: (result) => {
          if (entry.settled) return
          entry.settled = true
          resolve(result)
        },
      }
      signal?.addEventListener('abort', () => entry.resolve(onAbort), { once: true })
      list.push(entry)
      for (const w of this.wake.splice(0)) w()
    })
  }

  private async until<T>(get: () => T | undefined, timeoutMs = 5000): Promise<T> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const value = get()
      if (value !== undefined) return value
      if (Date.now() > deadline) throw new Error('timed out waiting for the bridge to be asked')
      await new Promise<void>((r) => {
        this.wake.push(r)
        setTimeout(r, 20)
      })
    }
  }
}

/** Records a runtime's events and waits for them. */
export class Recorder {
  readonly events: RuntimeEvent[] = []
  private waiters: Array<() => void> = []

  constructor(runtime: Pick<AgentRuntime, 'subscribe'>) {
    runtime.subscribe((e) => {
      this.events.push(e)
      for (const w of this.waiters.splice(0)) w()
    })
  }

  of<T extends RuntimeEvent['type']>(type: T): Array<Extract<RuntimeEvent, { type: T }>> {
    return this.events.filter((e): e is Extract<RuntimeEvent, { type: T }> => e.type === type)
  }

  /** Resolves with the n-th (1-based) event of this type. */
  async next<T extends RuntimeEvent['type']>(type: T, count = 1, timeoutMs = 8000): Promise<Extract<RuntimeEvent, { type: T }>> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const found = this.of(type)
      if (found.length >= count) return found[count - 1]
      if (Date.now() > deadline) {
        throw new Error(`timed out waiting for '${type}' #${count}; saw: ${this.events.map((e) => e.type).join(', ')}`)
      }
      await new Promise<void>((r) => {
        this.waiters.push(r)
        setTimeout(r, 25)
      })
    }
  }

  /** Resolves once the events seen so far satisfy `done`. */
  async until(done: (events: RuntimeEvent[]) => boolean, what: string, timeoutMs = 8000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!done(this.events)) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; saw: ${this.events.map((e) => e.type).join(', ')}`)
      await new Promise<void>((r) => {
        this.waiters.push(r)
        setTimeout(r, 25)
      })
    }
  }

  /** The latest queue the runtime reported, once it equals `expected` (pi 1.x queues after its input handlers). */
  async queueIs(expected: { steering: string[]; followUp: string[] }): Promise<void> {
    const same = (e: RuntimeEvent | undefined) =>
      e?.type === 'queue' && JSON.stringify([e.steering, e.followUp]) === JSON.stringify([expected.steering, expected.followUp])
    await this.until((events) => same(events.filter((e) => e.type === 'queue').at(-1)), `queue ${JSON.stringify(expected)}`)
  }

  text(): string {
    return this.of('assistant-delta')
      .map((e) => e.text)
      .join('')
  }
}

export function tempDir(): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'threadhost-runtime-'))
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

export const answered = (answer: DialogResolution['answer']): DialogResolution => ({ outcome: 'answered', answer })

export const quiet: RuntimeLogger = { info: () => {}, warn: () => {}, error: () => {} }

export interface PiTestOptions {
  dataDir: string
  /** Default: `<dataDir>/agent`, which does not exist — a fresh machine with no pi configured. */
  agentDir?: string
  demoDelayMs?: number
  log?: RuntimeLogger
  extraExtensions?: (ui: UiBridge) => ExtensionFactory[]
  /** Registered in the model runtime, e.g. pi-ai's faux provider with scripted replies. */
  providers?: Provider[]
  /** Default: the built-in tool policy. */
  toolPolicy?: ToolPolicy
  trustProjects?: 'yes' | 'no' | 'ask'
  shutdownMs?: number
}

/** A runtime driven as the thread machine drives it: each prompt without a number is the next run. */
export type TestRuntime = Omit<AgentRuntime, 'prompt'> & { prompt(prompt: QueuedPrompt, run?: number): void }

function numbered(runtime: AgentRuntime): TestRuntime {
  let run = runtime.lastRun()
  return new Proxy(runtime, {
    get(target, key) {
      if (key === 'prompt') return (prompt: QueuedPrompt, n?: number) => target.prompt(prompt, (run = n ?? run + 1))
      const value = Reflect.get(target, key)
      return typeof value === 'function' ? value.bind(target) : value
    },
  }) as TestRuntime
}

/** The real pi runtime factory on a fresh model runtime; `create` defaults the workspace to the data dir. */
export async function piRuntimes(o: PiTestOptions): Promise<{
  models: PiModels
  factory: RuntimeFactory
  create(options: Omit<RuntimeOptions, 'cwd'> & { cwd?: string }): Promise<TestRuntime>
}> {
  const agentDir = o.agentDir ?? join(o.dataDir, 'agent')
  const models = await PiModels.create({ agentDir, demoDelayMs: o.demoDelayMs ?? 0 })
  for (const provider of o.providers ?? []) models.register(provider)
  const factory = createPiRuntimeFactory({
    dataDir: o.dataDir,
    agentDir,
    models,
    log: o.log ?? quiet,
    ...(o.extraExtensions ? { extraExtensions: o.extraExtensions } : {}),
    ...(o.toolPolicy ? { toolPolicy: o.toolPolicy } : {}),
    ...(o.trustProjects ? { trustProjects: o.trustProjects } : {}),
    ...(o.shutdownMs !== undefined ? { shutdownMs: o.shutdownMs } : {}),
  })
  return { models, factory, create: async (options) => numbered(await factory.create({ cwd: o.dataDir, ...options })) }
}

/** pi's own example extensions, as its package ships them. */
export const PI_EXAMPLES = join(
  dirname(dirname(fileURLToPath(import.meta.resolve('@earendil-works/pi-coding-agent')))),
  'examples',
  'extensions',
)

/**
 * Installs pi's example extensions, unmodified, in an agent dir as a user would: each is linked
 * into `<agentDir>/extensions/` (a file, or a directory with its index.ts).
 */
export function installExamples(agentDir: string, ...names: string[]): void {
  const dir = join(agentDir, 'extensions')
  mkdirSync(dir, { recursive: true })
  for (const name of names) symlinkSync(join(PI_EXAMPLES, name), join(dir, basename(name)))
}

/** Resolves once `done()` is true; for effects that do not come as runtime events (log lines, notes). */
export async function waitFor(done: () => boolean, what: string, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** A logger that keeps what it is told, by level. */
export function keptLog(): RuntimeLogger & { infos: string[]; warnings: string[]; errors: string[] } {
  const kept = { infos: [] as string[], warnings: [] as string[], errors: [] as string[] }
  return {
    ...kept,
    info: (m) => kept.infos.push(m),
    warn: (m) => kept.warnings.push(m),
    error: (m) => kept.errors.push(m),
  }
}
