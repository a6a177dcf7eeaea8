/**
 * The walk: commands go to the real server over HTTP, the same commands go to the oracle
 * (`ThreadModel`, the thread machine itself), and after every step the two must agree — on each
 * reply's status and key body fields, and on the frames the machine writes — while invariants are
 * checked on every follower's stream. Any disagreement is a `Divergence`, naming the step.
 *
 * Between commands the walk waits for a resting point the model can name: the thread idle, a run
 * blocked on an open question, or a slow run streaming. So the runtime never races a command, and
 * the order in which the server saw things is the order the model is told them.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { initialView } from '../../src/shared/projection.js'
import type { Snapshot } from '../../src/schemas/index.js'
import { api } from '../server/harness.js'
import { describeCommand, type Command, type RunKind } from './commands.js'
import { Follower, sleep, type Connection, type Frame } from './follower.js'
import { startModelServer, type ModelServer } from './server.js'
import { MACHINE_FRAMES, MODEL_TIMEOUT_MS, ThreadModel, type Expected, type Reply } from './thread-model.js'

export class Divergence extends Error {
  /** The known server bug this divergence is an instance of (see docs/testing.md), if any. */
  get known(): string | undefined {
    return KNOWN_BUGS.find((b) => b.test.test(this.message))?.name
  }
}

/**
 * Server bugs the walk found and that are recorded (docs/testing.md, `walk-found-defects.test.ts`), not fixed
 * here. With `tolerateKnown` a walk that hits one starts a fresh thread and goes on, counting it.
 */
export const KNOWN_BUGS: { name: string; test: RegExp }[] = [
  // BUG-1 ("a prompt that waited on a stop runs outside its run", /the prompt ran outside its run/)
  // was fixed in src/runtime/pi-adapter.ts; it is no longer tolerated: a regression fails the walk.
]

export interface WalkOptions {
  demoDelayMs?: number
  /**
   * Test-only faults, to prove the invariants bite. `mutate-frame`: tab B's copy of every
   * `dialog-settled` frame is altered by one byte. `restored-order`: the oracle's rule for a stop's
   * `restored` is broken (follow-ups before steering).
   */
  fault?: 'mutate-frame' | 'restored-order'
  /** Progress lines. */
  log?: (line: string) => void
  /** A slow run is stopped by the walk once it has streamed this long (ms). */
  slowLimitMs?: number
  /** Count a known server bug (KNOWN_BUGS) and go on with a fresh thread instead of failing. */
  tolerateKnown?: boolean
  /** The walk extension (test/fixtures/walk-agent): the lever commands `stubborn`, `release`, `ext-ask`, `ext-run`, `withdraw`, `cold-ask`. */
  levers?: boolean
  /** A short idle timeout for the `retire` command (ms); without it `retire` does nothing. */
  idleMs?: number
}

export interface WalkStats {
  steps: number
  checks: number
  restarts: number
  lives: number
  replies: Record<string, number>
  /** Known bugs hit (tolerateKnown), by name. */
  known: Record<string, number>
  /** Time spent per command type (ms). */
  ms: Record<string, number>
}

const SLOW_WORDS = 10_000
const CONFIRM_SPEC = { method: 'confirm' as const, title: 'walk', message: '' }

interface Fate {
  modelId: string
  text: string
}

export class Walk {
  server!: ModelServer
  model!: ThreadModel
  threadId = ''
  life = 0
  A!: Follower
  B!: Follower
  late: Follower[] = []
  readonly stats: WalkStats = { steps: 0, checks: 0, restarts: 0, lives: 0, replies: {}, known: {}, ms: {} }
  readonly trace: Command[] = []
  #violations: string[] = []
  /** seq → raw frame, per thread: what every follower must have received byte for byte. */
  #frames = new Map<number, string>()
  /** The highest seq any tab saw before the latest restart: a new life of the feed starts above it. */
  #ceiling = 0
  #consumed = 0
  #kinds = new Map<number, RunKind>()
  #prompts = new Map<string, Fate>()
  /** Every fate tab A saw, by server messageId: user-message, prompt-rejected, prompt-handled. */
  #fates = new Map<string, string[]>()
  /** Server ids of prompts a stop handed back, in this life (the model's own list starts again after a restart). */
  #restoredBefore = new Set<string>()
  #slowSince = 0
  #lastSettled?: string
  #dialogOrder = newDialogOrder()
  #dataDir?: string
  /** The stubborn tool holds the stop pending (it said so on the feed) until the walk releases it. */
  #held = false
  /** The stubborn tool is working: the run rests until it is stopped. */
  #working = false
  /** Prompts sent while a stop was held: their replies come once the stopped run settles (or the thread goes). */
  #waiting: { id: string; text: string; reply: Promise<{ status: number; body: any }> }[] = []
  /** The extension's own question between runs (`ext-ask`), while it is open. */
  #extAsk?: string
  /** ask_user_question cards: dialog id → the tool call (the ask) it shows; and the cards the walk skipped. */
  #cards = new Map<string, string>()
  #skipped = new Set<string>()

  constructor(readonly options: WalkOptions = {}) {}

  get #modelFault() {
    return this.options.fault === 'restored-order' ? ('followUpsFirst' as const) : undefined
  }

  #serverOptions() {
    return { demoDelayMs: this.options.demoDelayMs ?? 5, levers: this.options.levers, idleMs: this.options.idleMs }
  }

  async start(dataDir?: string): Promise<void> {
    this.server = await startModelServer({ dataDir, ...this.#serverOptions() })
    this.#dataDir = this.server.dataDir
    await this.#newLife()
  }

  async close(): Promise<void> {
    for (const f of [this.A, this.B, ...this.late]) f?.close()
    await this.server?.close()
  }

  // ——— lives: a thread, its model, its tabs ———

  async #newLife(): Promise<void> {
    this.life++
    this.stats.lives++
    this.threadId = `w${this.life}`
    this.model = new ThreadModel(this.threadId, 0, this.#modelFault)
    this.#frames = new Map()
    this.#ceiling = 0
    this.#prompts = new Map()
    this.#fates = new Map()
    this.#restoredBefore = new Set()
    this.#kinds = new Map()
    this.#lastSettled = undefined
    this.#held = false
    this.#working = false
    this.#waiting = []
    this.#extAsk = undefined
    const created = await api(this.server.url, 'POST', '/api/threads', { id: this.threadId })
    this.#expect(created.status === 201, `POST /api/threads answered ${created.status}, expected 201`)
    await this.#openTabs()
  }

  async #openTabs(after?: { A: number; B: number }): Promise<void> {
    const onFrame = (f: Follower, c: Connection, frame: Frame) => this.#onFrame(f, c, frame)
    const mutate = this.options.fault === 'mutate-frame' ? (raw: string) => raw.replace('"outcome":"', '"outcome": "') : undefined
    const A = new Follower('A', onFrame)
    const B = new Follower('B', onFrame, mutate)
    const before = after ? this.A.current : undefined
    if (after) {
      // the same tabs, resumed after a restart: keep their history for the seq checks
      A.conns.push(...this.A.conns)
      B.conns.push(...this.B.conns)
    }
    this.A = A
    this.B = B
    // after a restart tab A takes a fresh snapshot (the model starts again from it) and tab B resumes
    // with its Last-Event-ID: a snapshot strictly above it, or (nothing numbered since) the frames to come
    await A.open(this.server.url, this.threadId)
    await B.open(this.server.url, this.threadId, after ? { after: after.B, afterRestart: true } : {})
    this.#consumed = 0
    this.#dialogOrder = newDialogOrder()
    const first = await A.first()
    this.#expect(first?.event === 'snapshot', `tab A's first frame was ${first?.event}, expected a snapshot`)
    if (after && first) {
      // a life that numbered no frame (a cold thread restarted again) raised no ceiling: the next life's
      // snapshot may stand at the same seq, and must then be the same state (a tab resuming there gets no frames)
      const unmoved = before?.first?.event === 'snapshot' && before.lastSeq === before.first.seq && first.seq === after.A
      this.#expect(
        first.seq > after.A || (after.A === 0 && first.seq === 0) || (unmoved && isDeepStrictEqual(first.data, before!.first!.data)),
        `after the restart tab A's snapshot is #${first.seq}, not above the #${after.A} it saw before` +
          (unmoved ? ` (and not the same state:\n${diff(before!.first!.data, first.data)})` : ''),
      )
    }
    await B.first(after ? 300 : 5000)
  }

  // ——— per-frame invariants, on every follower ———

  #onFrame(f: Follower, c: Connection, frame: Frame): void {
    const where = `tab ${f.name} (connection ${f.conns.indexOf(c) + 1})`
    if (frame.event !== frame.data.type) this.#violate(`${where}: event ${frame.event} carries data of type ${frame.data.type}`)
    if (frame.data.seq !== frame.seq) this.#violate(`${where}: id ${frame.seq} but data.seq ${frame.data.seq}`)
    if (c.lastSeq === undefined) {
      if (frame.event === 'snapshot') {
        if (c.after !== undefined && (c.afterRestart ? frame.seq <= c.after : frame.seq < c.after))
          this.#violate(`${where}: resumed after ${c.after} but got a snapshot at ${frame.seq}`)
      } else if (c.after === undefined || frame.seq !== c.after + 1) {
        this.#violate(`${where}: first frame ${frame.event} #${frame.seq}, expected a snapshot or #${(c.after ?? -1) + 1}`)
      }
    } else {
      if (frame.event === 'snapshot') this.#violate(`${where}: a snapshot in the middle of a stream (#${frame.seq})`)
      if (frame.seq !== c.lastSeq + 1) this.#violate(`${where}: #${frame.seq} follows #${c.lastSeq} (seq not contiguous)`)
    }
    if (frame.event === 'snapshot') return
    const seen = this.#frames.get(frame.seq)
    if (seen === undefined) {
      if (frame.seq <= this.#ceiling) this.#violate(`${where}: #${frame.seq} reuses an id from before the restart (ceiling ${this.#ceiling})`)
      this.#frames.set(frame.seq, frame.raw)
    } else if (seen !== frame.raw) {
      this.#violate(`${where}: frame #${frame.seq} differs from another tab's copy:\n  ${JSON.stringify(seen)}\n  ${JSON.stringify(frame.raw)}`)
    }
  }

  #violate(message: string): void {
    this.#violations.push(message)
  }

  #expect(ok: boolean, message: string): void {
    this.stats.checks++
    if (!ok) this.#violate(message)
  }

  #raise(): void {
    if (this.#violations.length) {
      const all = this.#violations.splice(0)
      const tail = (this.A?.current?.frames ?? []).slice(-14).map((f) => `    ${show(f.data)}`)
      throw new Divergence(`${all.join('\n')}\n  tab A's last frames:\n${tail.join('\n')}`)
    }
  }

  // ——— the oracle: frames of tab A, in order, against the model ———

  /** Feeds tab A's unread frames to the model: runtime inputs become machine events, machine frames must be the ones it expects. */
  #drain(): void {
    const conn = this.A.current
    if (!conn) return
    while (this.#consumed < conn.frames.length) this.#align(conn.frames[this.#consumed++])
  }

  #align(frame: Frame): void {
    const m = this.model
    const d = frame.data
    this.#checkDialogOrder(d)
    if (d.type === 'snapshot') return
    if (d.type === 'user-message' || d.type === 'prompt-rejected' || d.type === 'prompt-handled') {
      this.#fates.set(d.messageId, [...(this.#fates.get(d.messageId) ?? []), `${d.type}${d.reason ? ` ${d.reason}` : ''} #${d.seq}`])
      if (d.type === 'user-message') m.queue = m.queue.filter((q) => q.serverId !== d.messageId)
    }
    // the agent speaks only inside a run: between the run's status {busy: true} and its settled
    if (d.type === 'user-message')
      this.#expect(
        (m.state === 'running' || m.state.startsWith('aborting')) && d.run === m.run,
        `user-message #${d.seq} (run ${d.run}) arrived while the thread is ${m.state} in run ${m.run}: the prompt ran outside its run`,
      )
    if (d.type === 'assistant-start' || d.type === 'tool-start')
      this.#expect(m.state === 'running' || m.state.startsWith('aborting'), `${d.type} #${d.seq} arrived while the thread is ${m.state} (run ${m.run} settled)`)
    if (d.type === 'tool-update' && typeof d.partial?.text === 'string') {
      if (d.partial.text === 'working') this.#working = true
      if (d.partial.text.startsWith('asked while stopping')) {
        // the stubborn tool asked after its stop: the machine refused the question without showing it
        this.#expect(m.state.startsWith('aborting'), `the stubborn tool asked while the thread is ${m.state}, expected a pending stop`)
        this.#expect(d.partial.text.includes('→ false'), `a question asked while stopping was answered: ${d.partial.text}`)
        m.send({ type: 'ASK', dialogId: `stopping-${d.seq}`, spec: CONFIRM_SPEC, origin: { kind: 'tool', name: 'walk_stubborn', toolCallId: d.toolCallId } })
        this.#held = true
      }
    }
    if (d.type === 'settled') this.#working = false
    this.#alignAsks(d)
    if (!MACHINE_FRAMES.has(d.type)) return
    let e = m.expected[0]
    if (!e && m.state === 'idle' && ((d.type === 'status' && !d.live) || (d.type === 'dialog-settled' && d.outcome === 'cancelled'))) {
      // the idle timer (the runtime's input, like a settle): the thread retires
      m.elapseIdle()
      e = m.expected[0]
    }
    if (!e && d.type === 'dialog-settled' && d.outcome === 'aborted' && d.id === this.#extAsk) {
      // the extension's own signal took its question back
      m.withdraw(d.id)
      e = m.expected[0]
    }
    if (!e || !this.#matches(e, d)) {
      if (!e && d.type === 'extension-ui-request')
        m.send({ type: 'ASK', dialogId: d.id, spec: d.dialog, origin: d.origin, ...(d.expiresAt ? { timeoutMs: MODEL_TIMEOUT_MS } : {}) })
      else if (!e && d.type === 'settled') {
        // what the run left in the runtime's queue (a run an extension cut short): the adapter hands it over with the settle
        const left = [...m.queue.filter((q) => q.deliverAs === 'steer'), ...m.queue.filter((q) => q.deliverAs === 'followUp')]
        m.queue = []
        m.send({ type: 'SETTLED', aborted: d.aborted, unclaimed: left.map((q) => ({ messageId: q.id, text: q.text })) })
      }
      else if (!e && d.type === 'dialog-settled' && d.outcome === 'timeout') m.expire(d.id)
      else if (d.type === 'prompt-rejected') {
        // the runtime's own report (a fate like any other), not the machine's
        m.queue = m.queue.filter((q) => q.serverId !== d.messageId)
        return
      }
      e = m.expected[0]
    }
    this.stats.checks++
    if (!e) return this.#violate(`the server wrote ${show(d)}; the model expected no frame from the machine`)
    if (!this.#matches(e, d)) return this.#violate(`the server wrote ${show(d)}; the model expected ${JSON.stringify(e)}`)
    m.expected.shift()
    if (d.type === 'dialog-settled') this.#lastSettled = d.id
    if (d.type === 'dialog-settled' && d.id === this.#extAsk) this.#extAsk = undefined
    const ask = d.type === 'dialog-settled' ? this.#cards.get(d.id) : undefined
    if (ask !== undefined) {
      // how the card ended reaches the ask-queue, as the ask bridge reports it
      const skipped = this.#skipped.has(d.id)
      m.cardEnded(ask, d.outcome !== 'answered' ? { status: 'cancelled' } : skipped ? { status: 'skipped' } : { status: 'answered', answer: {} })
    }
    if (d.type === 'settled') this.#held = false
  }

  /** The ask-queue: each ask_user_question call is an ASK; each card shown must be the one the queue chose; each call's result is the queue's decision. */
  #alignAsks(d: any): void {
    const m = this.model
    if (d.type === 'tool-start' && d.name === 'ask_user_question') m.ask({ type: 'ASK', askId: d.toolCallId })
    if (d.type === 'extension-ui-request' && d.origin?.name === 'ask_user_question') {
      this.#cards.set(d.id, d.origin.toolCallId)
      const shown = m.askShown.shift()
      this.#expect(shown === d.origin.toolCallId, `the ask card for ${d.origin.toolCallId} was shown; the ask-queue would show ${shown ?? 'nothing'}`)
    }
    if (d.type === 'tool-end' && m.askResolved.has(d.toolCallId)) {
      const status = m.askResolved.get(d.toolCallId)!
      m.askResolved.delete(d.toolCallId)
      const text = String(d.result?.text ?? '')
      const got = ['skipped', 'cancelled', 'unavailable'].includes(text) ? text : 'answered'
      this.#expect(got === status, `ask_user_question ${d.toolCallId} ended ${got} (${text.slice(0, 60)}); the ask-queue resolved it ${status}`)
    }
  }

  #matches(e: Expected, d: any): boolean {
    if (e.type !== d.type) return false
    switch (e.type) {
      case 'status':
        return e.live === d.live && e.busy === d.busy && e.run === d.run
      case 'settled':
        return e.run === d.run && e.aborted === d.aborted
      case 'extension-ui-request':
        return e.id === d.id
      case 'dialog-settled':
        return e.id === d.id && e.outcome === d.outcome
      case 'prompt-rejected':
        return (this.model.serverIds.get(e.messageId) ?? e.messageId) === d.messageId && e.reason === d.reason
      case 'failure':
        return true
    }
  }

  /** Every question is settled exactly once, before the tool that asked ends and before the run's settled and status. */
  #checkDialogOrder(d: any): void {
    const o = this.#dialogOrder
    switch (d.type) {
      case 'snapshot':
        for (const dlg of d.openDialogs) o.open.set(dlg.id, new Set(dlg.origin?.toolCallId ? [dlg.origin.toolCallId] : []))
        return
      case 'tool-start':
        o.tools.add(d.toolCallId)
        return
      case 'extension-ui-request':
        this.#expect(!o.open.has(d.id) && !o.settled.has(d.id), `question ${d.id} was asked twice`)
        o.open.set(d.id, new Set(d.origin?.toolCallId ? [d.origin.toolCallId] : o.tools))
        return
      case 'dialog-settled':
        this.#expect(o.open.has(d.id), `dialog-settled ${d.id} (${d.outcome}) without an open request${o.settled.has(d.id) ? ': settled twice' : ''}`)
        o.open.delete(d.id)
        o.settled.add(d.id)
        return
      case 'tool-end':
        for (const [id, askers] of o.open) this.#expect(!askers.has(d.toolCallId), `tool-end of ${d.toolCallId} while its question ${id} is still open`)
        o.tools.delete(d.toolCallId)
        return
      case 'settled':
      case 'status':
        this.#expect(o.open.size === 0, `${d.type} #${d.seq} while question(s) ${[...o.open.keys()].join(', ')} are open`)
        return
    }
  }

  // ——— resting points ———

  #view(conn: Connection | undefined = this.A.current): Snapshot | undefined {
    return conn?.view
  }

  #streaming(view: Snapshot): boolean {
    if (!view.status.busy || this.#kinds.get(view.status.run) !== 'slow') return false
    const last = view.transcript.at(-1)
    return last?.kind === 'assistant' && last.streaming && last.text.length > 0
  }

  /** Waits until the thread rests: idle, a run blocked on an open question, or a slow run streaming. */
  async #quiet(timeoutMs = 10_000): Promise<Snapshot> {
    const start = Date.now()
    const until = start + timeoutMs
    let length = -1
    let since = Date.now()
    for (;;) {
      const conn = this.A.current!
      // the model reads the frames as they come: a stop is pending until it has read the run's settle
      this.#drain()
      const stopping = this.model.state.startsWith('aborting')
      const view = this.#view(conn) ?? initialView(this.threadId)
      if (conn.frames.length !== length) {
        length = conn.frames.length
        since = Date.now()
      }
      const rests = (!stopping || (this.#held && this.model.state === 'aborting.stopping')) && (!view.status.busy || view.openDialogs.length > 0 || this.#held)
      if (!stopping && this.model.state === 'running' && this.#streaming(view) && Date.now() - start >= 15) return view
      if (!stopping && this.model.state === 'running' && this.#working && this.#toolWorks() && Date.now() - since >= 30) return view
      if (rests && Date.now() - since >= 30) return view
      if (conn.ended || Date.now() > until) {
        this.#violate(`the thread never came to rest (status ${JSON.stringify(view.status)}, ${view.openDialogs.length} open question(s), model ${this.model.state})`)
        this.#raise()
      }
      await sleep(4)
    }
  }

  /** The model's replies to a request, draining tab A until they come (a prompt behind a stop is answered at the settle). */
  async #replyOf(id: string, count = 1): Promise<Reply[]> {
    const until = Date.now() + 5000
    const enough = () => (this.model.replies.get(id)?.length ?? 0) >= count
    for (;;) {
      // read only as far as the frame that brings the reply: the caller learns the server's messageId before later frames name it
      const conn = this.A.current!
      while (!enough() && this.#consumed < conn.frames.length) this.#align(conn.frames[this.#consumed++])
      if (enough()) return this.model.take(id)
      if (Date.now() > until) {
        this.#violate(`the model gave no reply to ${id} (model in ${this.model.state}); the server did`)
        this.#raise()
      }
      await sleep(3)
    }
  }

  // ——— commands ———

  async step(c: Command): Promise<void> {
    const t0 = Date.now()
    try {
      await this.#step(c)
    } finally {
      this.stats.ms[c.t] = (this.stats.ms[c.t] ?? 0) + Date.now() - t0
    }
  }

  async #step(c: Command): Promise<void> {
    this.trace.push(c)
    const m = this.model
    if (this.#kinds.get(m.run) === 'slow' && m.state === 'running' && Date.now() - this.#slowSince > (this.options.slowLimitMs ?? 3000)) {
      // a slow run streams ~10000 words; the walk stops it rather than wait
      await this.#abort({ t: 'abort', run: 'none' })
      await this.#settle()
    }
    switch (c.t) {
      case 'prompt':
        await this.#prompt(c)
        break
      case 'abort':
        await this.#abort(c)
        break
      case 'abort-twice':
        await this.#abortTwice()
        break
      case 'take':
        await this.#take(c)
        break
      case 'abort-and-prompt':
        await this.#abortAndPrompt(c)
        break
      case 'answer':
        await this.#answer(c)
        break
      case 'timeout':
        await this.#timeout()
        break
      case 'delete':
        await this.#delete()
        break
      case 'resume':
        await this.#resume()
        break
      case 'join':
        await this.#join()
        break
      case 'restart':
        await this.#restart()
        break
      case 'release':
        await this.#release()
        break
      case 'ext-ask':
        await this.#extAskCommand()
        break
      case 'ext-run':
        await this.#extRun()
        break
      case 'withdraw':
        await this.#withdraw()
        break
      case 'cold-ask':
        await this.#coldAsk()
        break
      case 'cut':
        await this.#cut()
        break
      case 'retire':
        await this.#retire()
        break
    }
    await this.#settle()
    this.stats.steps++
  }

  /** Every open tab has taken the frames tab A has (so each frame is compared before the step ends). */
  async #catchUp(): Promise<void> {
    const head = this.A.current?.lastSeq ?? 0
    const until = Date.now() + 1000
    for (const t of [this.B, ...this.late]) {
      const conn = t.current!
      while (!conn.ended && (conn.lastSeq ?? conn.after ?? 0) < head && Date.now() < until) await sleep(2)
    }
  }

  /** Rest, read every frame into the model, check everything. */
  async #settle(): Promise<void> {
    const view = await this.#quiet()
    await this.#catchUp()
    this.#drain()
    this.#raise()
    await this.#checkRest(view)
    this.#raise()
  }

  #count(key: string) {
    this.stats.replies[key] = (this.stats.replies[key] ?? 0) + 1
  }

  #text(kind: RunKind): string {
    const n = this.model.nextId('')
    switch (kind) {
      case 'plain':
        return `hello ${this.life}.${n}`
      case 'confirm':
        return `call ui_dialog ${JSON.stringify({ method: 'confirm', title: `Deploy ${n}?` })}`
      case 'select':
        return `call ui_dialog ${JSON.stringify({ method: 'select', title: `Pick ${n}`, options: ['a', 'b'] })}`
      case 'ask': {
        const ask = (q: string) => `call ask_user_question ${JSON.stringify({ question: q, mode: 'single', options: [{ label: 'yes' }, { label: 'no' }] })}`
        return [ask(`First ${n}?`), ask(`Second ${n}?`)].join('\n')
      }
      case 'slow':
        return `slow ${SLOW_WORDS}`
      case 'stubborn':
        return 'call walk_stubborn {}'
      case 'cut':
        return 'call walk_cut {}'
    }
  }

  get #busy(): boolean {
    return this.model.state === 'running' || this.model.state.startsWith('aborting')
  }

  async #sendPrompt(text: string, admission: 'enqueue' | 'reject', deliverAs: 'steer' | 'followUp', run?: number) {
    return api(this.server.url, 'POST', `/api/threads/${this.threadId}/prompt`, { message: text, admission, deliverAs, ...(run !== undefined ? { run } : {}) })
  }

  /** Checks a prompt's reply against the model's, and remembers the prompt for its fate. */
  #checkPrompt(modelId: string, text: string, kind: RunKind, replies: Reply[], r: { status: number; body: any }): void {
    const [reply] = replies
    this.#expect(replies.length === 1, `prompt ${modelId}: the model replied ${replies.length} times`)
    if (reply?.type === 'prompt.admitted') {
      this.#expect(
        r.status === 202 && r.body.run === reply.run && r.body.queued === reply.queued,
        `prompt "${text.slice(0, 40)}": the server answered ${r.status} ${JSON.stringify(r.body)}, the model 202 {run: ${reply.run}, queued: ${reply.queued}}`,
      )
      if (r.status === 202) {
        this.model.serverIds.set(modelId, r.body.messageId)
        for (const q of this.model.queue) if (q.id === modelId) q.serverId = r.body.messageId
        this.#prompts.set(r.body.messageId, { modelId, text })
        if (!reply.queued) {
          this.#kinds.set(reply.run, kind)
          if (kind === 'slow') this.#slowSince = Date.now()
        }
      }
      this.#count('prompt 202')
    } else if (reply?.type === 'prompt.refused' && reply.reason === 'disposed') {
      // a prompt that waited on a held stop, refused by the delete or shutdown that took the thread
      this.#expect(
        r.status === 409 && r.body.reason === reply.closing,
        `prompt: the server answered ${r.status} ${JSON.stringify(r.body)}, the model 409 ${reply.closing}`,
      )
      this.#count(`prompt 409 ${reply.closing}`)
    } else if (reply?.type === 'prompt.refused') {
      // busy or stale-run: a live machine's only other refusals (a cold one never sees a prompt)
      this.#expect(
        r.status === 409 && r.body.reason === reply.reason,
        `prompt: the server answered ${r.status} ${JSON.stringify(r.body)}, the model 409 ${reply.reason}`,
      )
      this.#count(`prompt 409 ${reply.reason}`)
    }
  }

  async #prompt(c: Extract<Command, { t: 'prompt' }>): Promise<void> {
    const kind = this.#busy ? 'plain' : (c.kind === 'stubborn' || c.kind === 'cut') && !this.options.levers ? 'slow' : c.kind
    const text = this.#text(kind)
    const run = c.run ? this.model.runNamed(c.run) : undefined
    if (run !== undefined && run < 1) {
      // no run yet: `{run: 0}` breaks the body's schema (run ≥ 1) and never reaches the thread
      const r = await this.#sendPrompt(text, c.admission, c.deliverAs, run)
      this.#expect(r.status === 400, `prompt {run: 0}: the server answered ${r.status}, expected 400 (bad body)`)
      return this.#count('prompt 400')
    }
    if (kind === 'stubborn') await rm(this.#gate('walk-release'), { force: true })
    if (kind === 'cut') await rm(this.#gate('walk-cut'), { force: true })
    const id = this.model.prompt(text, c.admission, c.deliverAs, run)
    if (this.#held && !this.model.replies.has(id)) {
      // it waits on the held stop: its reply comes when the stopped run settles (release) or the thread goes
      this.#waiting.push({ id, text, reply: this.#sendPrompt(text, c.admission, c.deliverAs, run) })
      // the server has it once its queue position is taken: give the request its turn before the next command
      await sleep(20)
      return
    }
    const r = await this.#sendPrompt(text, c.admission, c.deliverAs, run)
    this.#checkPrompt(id, text, kind, await this.#replyOf(id), r)
    if (run !== undefined && r.status === 202) this.#count(`prompt 202 naming its run (${r.body.queued ? 'queued' : 'started the next'})`)
  }

  #abortBody(run: 'none' | 'current' | 'stale'): { run?: number } | undefined {
    if (run === 'none') return undefined
    return { run: run === 'current' ? this.model.run : this.model.run + 7 }
  }

  #checkAbort(reply: Reply | undefined, r: { status: number; body: any }): void {
    if (reply?.type === 'abort.answered') {
      // the receipt carries the texts; the model's ids are its own
      const texts = reply.restored.map((p) => p.text)
      this.#expect(
        r.status === 200 && isDeepStrictEqual(r.body.restored, texts),
        `abort: the server answered ${r.status} ${JSON.stringify(r.body)}, the model 200 restored ${JSON.stringify(texts)}`,
      )
      this.#count(reply.restored.length ? 'abort 200 restored' : 'abort 200')
    } else if (reply?.type === 'abort.refused') {
      const status = reply.reason === 'not-live' ? 404 : 409
      this.#expect(
        r.status === status && (status === 404 || r.body.reason === reply.reason),
        `abort: the server answered ${r.status} ${JSON.stringify(r.body)}, the model ${status} ${reply.reason}`,
      )
      this.#count(`abort ${status} ${reply.reason}`)
    } else this.#violate(`abort: the model gave no reply`)
  }

  async #abort(c: Extract<Command, { t: 'abort' }>): Promise<void> {
    const body = this.#abortBody(c.run)
    if (body?.run !== undefined && body.run < 1) {
      // no run yet: `{run: 0}` breaks the body's schema (run ≥ 1) and never reaches the thread
      const r = await api(this.server.url, 'POST', `/api/threads/${this.threadId}/abort`, body)
      this.#expect(r.status === 400, `abort {run: 0}: the server answered ${r.status}, expected 400 (bad body)`)
      return this.#count('abort 400')
    }
    const replyTo = this.model.nextId('a')
    this.model.send({ type: 'ABORT', replyTo, ...(body ?? {}) })
    const r = await api(this.server.url, 'POST', `/api/threads/${this.threadId}/abort`, body)
    this.#checkAbort((await this.#replyOf(replyTo))[0], r)
  }

  /** pi's Alt+Up: the queue comes back as a stop's would, and the run goes on. */
  async #take(c: Extract<Command, { t: 'take' }>): Promise<void> {
    const body = c.run === 'stale' ? { run: this.model.run + 7 } : undefined
    const replyTo = this.model.nextId('t')
    this.model.send({ type: 'TAKE_QUEUE', replyTo, ...(body ?? {}) })
    const r = await api(this.server.url, 'POST', `/api/threads/${this.threadId}/queue/take`, body)
    const [reply] = await this.#replyOf(replyTo)
    if (reply?.type === 'take.answered') {
      const texts = reply.restored.map((p) => p.text)
      this.#expect(
        r.status === 200 && isDeepStrictEqual(r.body.restored, texts),
        `take: the server answered ${r.status} ${JSON.stringify(r.body)}, the model 200 restored ${JSON.stringify(texts)}`,
      )
      this.#count(reply.restored.length ? 'take 200 restored' : 'take 200')
    } else if (reply?.type === 'take.refused') {
      const status = reply.reason === 'not-live' ? 404 : 409
      this.#expect(
        r.status === status && (status === 404 || r.body.reason === reply.reason),
        `take: the server answered ${r.status} ${JSON.stringify(r.body)}, the model ${status} ${reply.reason}`,
      )
      this.#count(`take ${status} ${reply.reason}`)
    } else this.#violate(`take: the model gave no reply`)
  }

  /** Two stops at once while a run is in flight: one takes the queue, the repeat gets [] (or, landing after the settle, 409 idle). */
  async #abortTwice(): Promise<void> {
    if (this.model.state !== 'running') return this.#abort({ t: 'abort', run: 'none' })
    const first = this.model.nextId('a')
    this.model.send({ type: 'ABORT', replyTo: first })
    const url = `/api/threads/${this.threadId}/abort`
    const [r1, r2] = await Promise.all([api(this.server.url, 'POST', url), api(this.server.url, 'POST', url)])
    const [reply] = await this.#replyOf(first)
    // which of the two took the queue is the server's choice; the model says one did and the other gets nothing
    const [taker, repeat] = r1.status === 200 && (r2.status !== 200 || r1.body.restored.length >= r2.body.restored.length) ? [r1, r2] : [r2, r1]
    this.#checkAbort(reply, taker)
    if (repeat.status === 200) {
      const second = this.model.nextId('a')
      this.model.send({ type: 'ABORT', replyTo: second })
      this.#checkAbort((await this.#replyOf(second))[0], repeat)
    } else {
      // it landed after the run settled: the model must say idle once it has seen the settle
      await this.#quiet()
      this.#drain()
      const second = this.model.nextId('a')
      this.model.send({ type: 'ABORT', replyTo: second })
      this.#checkAbort((await this.#replyOf(second))[0], repeat)
    }
  }

  /**
   * A stop and a prompt at the same instant. The prompt lands before the stop (queued, then restored),
   * while it is pending (it waits and starts the next run), or after the run settled (it starts it
   * from idle). The replies and the order of the frames say which; the model is told in that order.
   */
  async #abortAndPrompt(c: Extract<Command, { t: 'abort-and-prompt' }>): Promise<void> {
    const m = this.model
    if (m.state !== 'running') return this.#abort({ t: 'abort', run: 'none' })
    const text = this.#text('plain')
    const before = this.A.current!.frames.length
    const [ra, rp] = await Promise.all([
      api(this.server.url, 'POST', `/api/threads/${this.threadId}/abort`),
      // the stop's request goes out first; the prompt follows it on the same tick
      this.#sendPrompt(text, 'enqueue', c.deliverAs),
    ])
    const stopReply = m.nextId('a')
    let promptId: string
    if (rp.status === 202 && rp.body.queued === true) {
      promptId = m.prompt(text, 'enqueue', c.deliverAs)
      m.send({ type: 'ABORT', replyTo: stopReply })
      this.#count('abort+prompt: before the stop')
    } else {
      m.send({ type: 'ABORT', replyTo: stopReply })
      // wait for the next run's status, then see whether an idle status came between the settle and it
      const conn = this.A.current!
      const until = Date.now() + 5000
      const next = () => conn.frames.slice(before).find((f) => f.event === 'status' && f.data.busy && f.data.run === m.run + 1)
      while (!next() && Date.now() < until) await sleep(3)
      const frames = conn.frames.slice(before)
      const settledAt = frames.findIndex((f) => f.event === 'settled')
      const afterSettle = frames.slice(settledAt + 1).find((f) => f.event === 'status')
      if (settledAt >= 0 && afterSettle?.data.busy === false) {
        // after the stop: read up to the idle status, then the prompt starts a run from idle
        const idleAt = conn.frames.indexOf(afterSettle)
        while (this.#consumed <= idleAt) this.#align(conn.frames[this.#consumed++])
        this.#count('abort+prompt: after the settle')
      } else this.#count('abort+prompt: while the stop was pending')
      promptId = m.prompt(text, 'enqueue', c.deliverAs)
    }
    this.#checkAbort((await this.#replyOf(stopReply))[0], ra)
    this.#checkPrompt(promptId, text, 'plain', await this.#replyOf(promptId), rp)
  }

  /** The oldest open question (model's view), with its spec (from tab A's view). */
  #openQuestion(): { id: string; dialog: any } | undefined {
    const id = this.model.dialogs[0]
    if (!id) return undefined
    const open = this.#view()?.openDialogs.find((d) => d.id === id)
    return open ? { id, dialog: open.dialog } : undefined
  }

  #payload(dialog: any, how: 'right' | 'wrong' | 'skip'): Record<string, unknown> {
    switch (dialog.method) {
      case 'confirm':
        return how === 'wrong' ? { confirmed: 'yes' } : { confirmed: true }
      case 'select':
        return { value: how === 'wrong' ? 'not offered' : dialog.options[0] }
      case 'questionnaire': {
        const q = dialog.questions[0]
        if (how === 'skip') return { answers: [{ id: q.id, skipped: true }] }
        return { answers: [{ id: q.id, value: how === 'wrong' ? 'maybe' : q.options[0].value }] }
      }
      default:
        return { value: how === 'wrong' ? '' : 'text' }
    }
  }

  #answerEvent(dialogId: string, payload: Record<string, unknown>, replyTo: string) {
    const { cancelled, ...answer } = payload
    return cancelled === true
      ? ({ type: 'DIALOG.CANCEL', dialogId, replyTo } as const)
      : ({ type: 'DIALOG.ANSWER', dialogId, answer: cancelled === undefined ? answer : payload, replyTo } as const)
  }

  #checkAnswer(reply: Reply | undefined, r: { status: number; body: any }, what: string): void {
    const want = reply?.type === 'dialog.answered' ? 204 : reply?.type === 'dialog.refused' ? 422 : 404
    this.#expect(
      r.status === want && (want !== 422 || r.body.refusal === (reply as { refusal: string }).refusal),
      `answer ${what}: the server answered ${r.status} ${JSON.stringify(r.body ?? '')}, the model ${want} ${reply?.type ?? '(not live)'}`,
    )
    this.#count(`answer ${r.status}`)
  }

  async #answer(c: Extract<Command, { t: 'answer' }>): Promise<void> {
    const open = this.#openQuestion()
    const post = (id: string, payload: Record<string, unknown>) =>
      api(this.server.url, 'POST', `/api/threads/${this.threadId}/dialog`, { id, ...payload })
    if (!open || c.how === 'spent') {
      const id = this.#lastSettled ?? 'never-asked'
      // a spent id is withdrawn (Cancel); any other answer with nothing open answers a spent or unknown id
      const payload = c.how === 'spent' ? { cancelled: true } : { confirmed: true }
      const replyTo = this.model.nextId('d')
      this.model.send(this.#answerEvent(id, payload, replyTo))
      const r = await post(id, payload)
      const replies = this.model.live ? await this.#replyOf(replyTo) : this.model.take(replyTo)
      return this.#checkAnswer(replies[0], r, `to spent ${id}`)
    }
    if (c.how === 'two-tabs') {
      const payload = this.#payload(open.dialog, 'right')
      const [t1, t2] = [this.model.nextId('d'), this.model.nextId('d')]
      this.model.send(this.#answerEvent(open.id, payload, t1))
      this.model.send(this.#answerEvent(open.id, payload, t2))
      const rs = await Promise.all([post(open.id, payload), post(open.id, payload)])
      const replies = [...(await this.#replyOf(t1)), ...(await this.#replyOf(t2))]
      // which tab won is the server's choice; the statuses are one 204 and one 404
      const want = replies.map((r) => (r.type === 'dialog.answered' ? 204 : r.type === 'dialog.refused' ? 422 : 404)).sort()
      const got = rs.map((r) => r.status).sort()
      this.#expect(isDeepStrictEqual(want, got), `two tabs answered at once: the server said ${got}, the model ${want}`)
      this.#count(`answer two tabs ${got.join('+')}`)
      return
    }
    const payload = c.how === 'cancel' ? { cancelled: true } : this.#payload(open.dialog, c.how)
    if (c.how === 'skip') this.#skipped.add(open.id)
    const replyTo = this.model.nextId('d')
    this.model.send(this.#answerEvent(open.id, payload, replyTo))
    const r = await post(open.id, payload)
    this.#checkAnswer((await this.#replyOf(replyTo))[0], r, `${c.how} to ${open.dialog.method}`)
  }

  async #timeout(): Promise<void> {
    if (this.#busy) return this.#answer({ t: 'answer', how: 'right' })
    const text = `call ui_dialog ${JSON.stringify({ method: 'confirm', title: 'Still there?', timeoutMs: 60 })}`
    const conn = this.A.current!
    const before = conn.frames.length
    const id = this.model.prompt(text, 'enqueue', 'steer')
    const r = await this.#sendPrompt(text, 'enqueue', 'steer')
    this.#checkPrompt(id, text, 'confirm', await this.#replyOf(id), r)
    const until = Date.now() + 5000
    while (!conn.frames.slice(before).some((f) => f.event === 'dialog-settled' && f.data.outcome === 'timeout') && Date.now() < until) await sleep(5)
    this.#count('timeout')
  }

  async #delete(): Promise<void> {
    const m = this.model
    this.server.probe.record(this.threadId).releasing = true
    // cold and never built: nothing to dispose; otherwise the delete is a DISPOSE like any other
    if (m.state !== 'cold') m.send({ type: 'DISPOSE', reason: 'deleted', dialogOutcome: 'cancelled' })
    const deleting = api(this.server.url, 'DELETE', `/api/threads/${this.threadId}`)
    await this.#letGoOfHeldStop()
    const r = await deleting
    await this.#answerWaiting()
    this.#expect(r.status === 204, `DELETE answered ${r.status}, expected 204`)
    // the tabs are closed, and nothing arrives after the delete but the close
    const tabs = [this.A, this.B, ...this.late]
    const until = Date.now() + 5000
    while (tabs.some((t) => !t.current!.ended) && Date.now() < until) await sleep(5)
    for (const t of tabs) {
      const conn = t.current!
      this.#expect(conn.ended, `tab ${t.name} was not closed by the delete`)
      const last = conn.frames.at(-1)
      if (m.state !== 'cold' && t !== this.A)
        this.#expect(last?.event === 'status' && last.data.live === false, `tab ${t.name}: the last frame before the close is ${show(last?.data)}, expected status {live: false}`)
    }
    this.#drain()
    const lastA = this.A.current!.frames.at(-1)
    if (m.state === 'disposed')
      this.#expect(lastA?.event === 'status' && lastA.data.live === false, `tab A: the last frame before the close is ${show(lastA?.data)}, expected status {live: false}`)
    this.#expect(m.expected.length === 0, `after the delete the model still expects ${JSON.stringify(m.expected)}`)
    this.#checkFates(true)
    const again = await api(this.server.url, 'GET', `/api/threads/${this.threadId}/follow`)
    this.#expect(again.status === 404, `following a deleted thread answered ${again.status}, expected 404`)
    this.#raise()
    for (const t of tabs) t.close()
    this.late = []
    this.#count('delete')
    await this.#newLife()
  }

  async #resume(): Promise<void> {
    const B = this.B
    B.closeCurrent()
    await sleep(5)
    const after = B.lastSeq
    await B.open(this.server.url, this.threadId, { after })
    this.#count('resume')
  }

  async #join(): Promise<void> {
    const t = new Follower(`late${this.late.length + 1}`, (f, c, frame) => this.#onFrame(f, c, frame))
    await t.open(this.server.url, this.threadId)
    await t.first()
    this.late.push(t)
    if (this.late.length > 2) this.late.shift()!.close()
    this.#count('join')
  }

  /** A graceful restart: the server shuts down (queued prompts rejected, open questions aborted), starts again on the same data, and the tabs resume. */
  async #restart(): Promise<void> {
    const m = this.model
    this.server.probe.record(this.threadId).releasing = true
    if (m.state !== 'cold') m.send({ type: 'DISPOSE', reason: 'shutdown', dialogOutcome: 'aborted' })
    for (const t of this.late) t.close()
    this.late = []
    const stopping = this.server.stop()
    await this.#letGoOfHeldStop()
    await stopping
    await this.#answerWaiting()
    const until = Date.now() + 5000
    while ((!this.A.current!.ended || !this.B.current!.ended) && Date.now() < until) await sleep(5)
    this.#drain()
    this.#expect(m.expected.length === 0, `after the shutdown the model still expects ${JSON.stringify(m.expected)}`)
    this.#checkFates(true)
    this.#checkTells()
    this.#raise()
    // a new process, a new count: the old life's stops were checked just above
    this.server.probe.record(this.threadId).aborts.clear()
    const seen = Math.max(this.A.lastSeq, this.B.lastSeq, ...this.#frames.keys())
    this.#ceiling = seen
    this.server = await startModelServer({ dataDir: this.#dataDir, ...this.#serverOptions(), probe: this.server.probe })
    for (const id of m.restored) if (m.serverIds.has(id)) this.#restoredBefore.add(m.serverIds.get(id)!)
    this.model = new ThreadModel(this.threadId, m.run, this.#modelFault)
    // the fates of this life carry on; a prompt's fate was written before the shutdown
    await this.#openTabs({ A: this.A.lastSeq, B: this.B.lastSeq })
    // a rejection is part of the thread's history: the new life's snapshot still has every one (BUG-2)
    const history = (this.A.current!.first?.data as Snapshot | undefined)?.transcript ?? []
    for (const [messageId, fates] of this.#fates)
      if (fates.some((f) => f.startsWith('prompt-rejected')))
        this.#expect(
          history.some((e) => e.kind === 'rejected' && e.messageId === messageId),
          `after the restart the snapshot has no rejected entry for ${messageId} (${fates.join(', ')})`,
        )
    this.#raise()
    this.stats.restarts++
    this.#count('restart')
  }

  // ——— levers: the walk extension and the idle timeout ———

  /** A gate file of the walk extension, in the thread's session directory (test/fixtures/walk-agent). */
  #gate(name: string): string {
    return join(this.server.dataDir, 'sessions', this.threadId, name)
  }

  async #open(name: string): Promise<void> {
    await mkdir(join(this.server.dataDir, 'sessions', this.threadId), { recursive: true })
    await writeFile(this.#gate(name), '')
  }

  /** Waits until tab A has a frame (after index `from`) that `pred` accepts. */
  async #frameAfter(from: number, pred: (d: any) => boolean, ms = 5000): Promise<boolean> {
    const conn = this.A.current!
    const until = Date.now() + ms
    for (;;) {
      if (conn.frames.slice(from - conn.dropped).some((f) => pred(f.data))) return true
      if (conn.ended || Date.now() > until) return false
      await sleep(4)
    }
  }

  /** A delete or shutdown took a thread whose stop is held: once the machine is done, let the tool go (the release waits on it). */
  async #letGoOfHeldStop(): Promise<void> {
    if (!this.#held) return
    const from = this.A.current!.frames.length + this.A.current!.dropped - 8
    await this.#frameAfter(Math.max(0, from), (d) => d.type === 'status' && d.live === false)
    this.#held = false
    await this.#open('walk-release')
  }

  /** The replies to the prompts that waited on a held stop. */
  async #answerWaiting(): Promise<void> {
    for (const w of this.#waiting.splice(0)) {
      const r = await w.reply
      const replies = this.model.live ? await this.#replyOf(w.id) : this.model.take(w.id)
      this.#checkPrompt(w.id, w.text, 'plain', replies, r)
    }
  }

  async #release(): Promise<void> {
    if (!this.#held) return
    await this.#open('walk-release')
    this.#held = false
    await this.#answerWaiting()
    this.#count('release')
  }

  /** A lever tool of the current run is at work (it rests until stopped, released or cut). */
  #toolWorks(): boolean {
    const kind = this.#kinds.get(this.model.run)
    return kind === 'stubborn' || kind === 'cut'
  }

  async #cut(): Promise<void> {
    if (!this.options.levers || this.model.state !== 'running' || this.#kinds.get(this.model.run) !== 'cut' || !this.#working) return
    const from = this.A.current!.frames.length + this.A.current!.dropped
    await this.#open('walk-cut')
    this.#expect(await this.#frameAfter(from, (d) => d.type === 'settled'), 'the cut tool ended its run, but the run never settled')
    this.#count('cut')
  }

  async #extAskCommand(): Promise<void> {
    if (!this.options.levers || this.model.state !== 'idle' || this.#extAsk) return
    const from = this.A.current!.frames.length + this.A.current!.dropped
    await this.#open('walk-ask')
    const asked = await this.#frameAfter(from, (d) => d.type === 'extension-ui-request')
    this.#expect(asked, 'the extension asked between runs, but no question came')
    this.#drain()
    this.#extAsk = this.model.dialogs.at(-1)
    this.#count('ext-ask')
  }

  /** idle: the extension starts a run of its own (pi.sendUserMessage); the demo model answers it and it settles. */
  async #extRun(): Promise<void> {
    if (!this.options.levers || this.model.state !== 'idle' || this.#extAsk) return
    this.#drain()
    const from = this.A.current!.frames.length + this.A.current!.dropped
    // the runtime's input, said before any frame of the run: the machine numbers the run and is busy
    this.model.send({ type: 'RUN_STARTED' })
    this.#kinds.set(this.model.run, 'plain')
    await this.#open('walk-run')
    this.#expect(await this.#frameAfter(from, (d) => d.type === 'settled'), 'the extension started a run, but it never settled')
    this.#count('ext-run')
  }

  async #withdraw(): Promise<void> {
    const id = this.#extAsk
    if (!id || !this.model.dialogs.includes(id)) return
    const from = this.A.current!.frames.length + this.A.current!.dropped
    await this.#open('walk-withdraw')
    this.#expect(await this.#frameAfter(from, (d) => d.type === 'dialog-settled' && d.id === id), `the extension withdrew question ${id}, but it never settled`)
    this.#count('withdraw')
  }

  async #coldAsk(): Promise<void> {
    const m = this.model
    if (!this.options.levers || m.state !== 'cold') return this.#prompt({ t: 'prompt', kind: 'plain', deliverAs: 'steer', admission: 'enqueue' })
    const from = this.A.current!.frames.length + this.A.current!.dropped
    await this.#open('walk-ask-on-start')
    // the question comes while the runtime is built, before it is live: refused, never shown
    m.send({ type: 'ASK', dialogId: m.nextId('cold-'), spec: CONFIRM_SPEC, origin: { kind: 'extension', name: 'walk' } })
    await this.#prompt({ t: 'prompt', kind: 'plain', deliverAs: 'steer', admission: 'enqueue' })
    const told = await this.#frameAfter(from, (d) => d.type === 'notify' && String(d.message).startsWith('walk: asked on start'))
    this.#expect(told, 'the extension asked on start, but never said what it got')
    const said = this.A.current!.frames.find((f) => f.data.type === 'notify' && String(f.data.message).startsWith('walk: asked on start'))
    this.#expect(!said || said.data.message.endsWith('→ false'), `a question asked while the runtime was built got ${said?.data.message}`)
    this.#count('cold-ask')
  }

  async #retire(): Promise<void> {
    if (!this.options.idleMs || this.model.state !== 'idle') return
    // the release's own stop of the runtime is not a "tell"
    this.server.probe.record(this.threadId).releasing = true
    const from = this.A.current!.frames.length + this.A.current!.dropped
    const gone = await this.#frameAfter(from, (d) => d.type === 'status' && d.live === false, this.options.idleMs + 5000)
    this.#expect(gone, `the thread did not go cold after its idle timeout (${this.options.idleMs} ms)`)
    this.#count('retire')
  }

  // ——— what must hold at every resting point ———

  async #checkRest(view: Snapshot): Promise<void> {
    const m = this.model
    this.#expect(m.expected.length === 0, `the model expected frames the server never wrote: ${JSON.stringify(m.expected)}`)
    const streaming = this.#streaming(view)
    // the model and the server agree on the thread's state
    const status = m.state === 'cold' ? undefined : { live: m.live, busy: this.#busy, run: m.run }
    if (status) this.#expect(isDeepStrictEqual(view.status, status), `status: the server shows ${JSON.stringify(view.status)}, the model ${JSON.stringify(status)} (${m.state})`)
    this.#expect(
      isDeepStrictEqual(view.openDialogs.map((d) => d.id), m.dialogs),
      `open questions: the server shows ${JSON.stringify(view.openDialogs.map((d) => d.id))}, the model ${JSON.stringify(m.dialogs)}`,
    )
    if (!streaming || m.queue.length === 0) {
      const queue = {
        steering: m.queue.filter((q) => q.deliverAs === 'steer').map((q) => q.text),
        followUp: m.queue.filter((q) => q.deliverAs === 'followUp').map((q) => q.text),
      }
      this.#expect(isDeepStrictEqual(view.queue, queue), `queue: the server shows ${JSON.stringify(view.queue)}, the model ${JSON.stringify(queue)}`)
    }
    this.#checkTells()
    this.#checkFates(!this.#busy)
    // snapshot + frames fold to what a tab joining now is sent
    await this.#checkFold(streaming)
    this.#pruneFrames()
  }

  /** The runtime was told to stop exactly as often as the machine said, at most once per run. */
  #checkTells(): void {
    const m = this.model
    const told = this.server.probe.record(this.threadId).aborts
    for (const run of new Set([...told.keys(), ...m.tells.keys()])) {
      this.#expect((told.get(run) ?? 0) <= 1, `run ${run}: the runtime was told to stop ${told.get(run)} times`)
      this.#expect((told.get(run) ?? 0) === (m.tells.get(run) ?? 0), `run ${run}: the runtime was told to stop ${told.get(run) ?? 0} times, the machine said ${m.tells.get(run) ?? 0}`)
    }
  }

  /** Every prompt answered 2xx has exactly one fate (at most one while its run is in flight). */
  #checkFates(final: boolean): void {
    const m = this.model
    const restored = new Set([...this.#restoredBefore, ...[...m.restored].map((id) => m.serverIds.get(id))])
    for (const [messageId, p] of this.#prompts) {
      const fates = [...(this.#fates.get(messageId) ?? []), ...(restored.has(messageId) ? ['restored'] : [])]
      this.#expect(
        final ? fates.length === 1 : fates.length <= 1,
        `prompt "${p.text.slice(0, 40)}" (${messageId}) has ${fates.length} fates: ${fates.join(', ') || 'none'}`,
      )
    }
  }

  async #checkFold(streaming: boolean): Promise<void> {
    const tabs = [this.A, this.B, ...this.late]
    if (streaming) return
    const joiner = new Follower('joiner', () => {})
    await joiner.open(this.server.url, this.threadId)
    const snap = (await joiner.first())?.data as Snapshot | undefined
    joiner.close()
    if (!snap) return this.#violate('a tab joining now got no snapshot')
    for (const t of tabs) {
      const conn = t.current!
      if (!conn.view) continue // resumed with frames only: it has no snapshot of its own to fold
      const until = Date.now() + 2000
      while ((conn.lastSeq ?? 0) < snap.seq && !conn.ended && Date.now() < until) await sleep(3)
      if (!conn.view || conn.first!.seq > snap.seq || conn.lastSeq !== snap.seq) continue // resumed with frames only, or joined later
      this.#expect(isDeepStrictEqual(conn.view, snap), `tab ${t.name}: snapshot #${conn.first!.seq} + frames folded to #${snap.seq} differs from the snapshot a joining tab gets:\n${diff(conn.view, snap)}`)
    }
  }

  #pruneFrames(): void {
    const open = [this.A, this.B, ...this.late].map((t) => t.current?.lastSeq ?? 0)
    const low = Math.min(...open, this.B.lastSeq)
    for (const seq of this.#frames.keys()) if (seq < low - 1) this.#frames.delete(seq)
    for (const t of [this.A, this.B, ...this.late]) {
      for (const c of t.conns.slice(0, -1)) if (c.frames.length > 0) c.frames.length = 0
      const conn = t.current!
      const keep = t === this.A ? conn.frames.length - this.#consumed + 50 : 50
      const cut = conn.frames.length - keep
      if (cut > 500) {
        conn.frames.splice(0, cut)
        conn.dropped += cut
        if (t === this.A) this.#consumed -= cut
      }
    }
  }

  /** After a divergence: drop the thread (whatever state it is in) and go on with a fresh one. */
  async recover(): Promise<void> {
    this.#violations = []
    this.server.probe.record(this.threadId).releasing = true
    await api(this.server.url, 'DELETE', `/api/threads/${this.threadId}`).catch(() => {})
    for (const t of [this.A, this.B, ...this.late]) t.close()
    this.late = []
    await this.#newLife()
    this.#violations = []
  }

  /** The walk's end: stop what runs, settle what is open, and check that every prompt has its one fate. */
  async finish(): Promise<void> {
    for (let i = 0; i < 5 && (this.#busy || this.model.dialogs.length); i++) {
      if (this.#held) await this.#release()
      else if (!this.#busy && this.#extAsk) await this.#withdraw()
      else await this.#abort({ t: 'abort', run: 'none' })
      await this.#settle()
    }
    await this.#catchUp()
    this.#checkFates(true)
    this.#raise()
  }
}

function newDialogOrder() {
  return { open: new Map<string, Set<string>>(), settled: new Set<string>(), tools: new Set<string>() }
}

function show(d: any): string {
  if (!d) return '(nothing)'
  const { type, seq, ...rest } = d
  const brief = JSON.stringify(rest)
  return `${type} #${seq} ${brief.length > 160 ? brief.slice(0, 160) + '…' : brief}`
}

function diff(a: unknown, b: unknown): string {
  const x = JSON.stringify(a, null, 1).split('\n')
  const y = JSON.stringify(b, null, 1).split('\n')
  const out: string[] = []
  for (let i = 0; i < Math.max(x.length, y.length) && out.length < 12; i++) if (x[i] !== y[i]) out.push(`  fold: ${x[i]}\n  snap: ${y[i]}`)
  return out.join('\n')
}

/** Runs one sequence on a fresh walk; the divergence (if any) names the step and the sequence so far. */
export async function runSequence(commands: Command[], options: WalkOptions = {}, walk?: Walk): Promise<Walk> {
  const w = walk ?? new Walk(options)
  if (!walk) await w.start()
  try {
    for (const [i, c] of commands.entries()) {
      try {
        await w.step(c)
      } catch (error) {
        if (error instanceof Divergence && error.known && options.tolerateKnown) {
          w.stats.known[error.known] = (w.stats.known[error.known] ?? 0) + 1
          await w.recover()
          continue
        }
        if (error instanceof Divergence) throw new Divergence(`step ${i + 1} (${describeCommand(c)}): ${error.message}`)
        throw error
      }
    }
    try {
      await w.finish()
    } catch (error) {
      if (error instanceof Divergence && error.known && options.tolerateKnown) {
        w.stats.known[error.known] = (w.stats.known[error.known] ?? 0) + 1
        await w.recover()
      } else if (error instanceof Divergence) throw new Divergence(`finish (stop what runs, check every fate): ${error.message}`)
      else throw error
    }
  } finally {
    if (!walk) await w.close()
  }
  return w
}

export function replayScript(commands: Command[]): string {
  return `npm run walk -- --replay '${JSON.stringify(commands)}'`
}
