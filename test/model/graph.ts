/**
 * The machines' own graph, over the commands the HTTP surface offers.
 *
 * A node is the thread machine's state (with its dialog children) after a sequence of commands,
 * stepped by the same oracle the walk uses (`ThreadModel`) and a minimal runtime that answers the
 * way the demo model does: a plain prompt runs and settles, `call ui_dialog` / `ask_user_question`
 * ask (a batch of two asks twice), `slow` streams until stopped (the levers' `stubborn` and `cut`
 * tools work until stopped or cut); a stop settles the run aborted, a
 * prompt that waited on it then runs and settles. `xstate/graph`'s shortest paths reach every node;
 * the node key includes the machine transitions the last command took, so the paths also take every
 * transition the commands can reach. Each path is replayed against the real server by the walk.
 */
import { getShortestPaths } from 'xstate/graph'
import type { ActorLogic, AnyEventObject } from 'xstate'
import type { Command, RunKind } from './commands.js'
import { describeCommand } from './commands.js'
import { MODEL_TIMEOUT_MS, ThreadModel } from './thread-model.js'

const confirm = { method: 'confirm' as const, title: 'Deploy?', message: '' }
const question = (n: number) => ({
  method: 'questionnaire' as const,
  title: `Q${n}`,
  questions: [{ id: 'q1', prompt: `Q${n}`, mode: 'single' as const, options: [{ value: 'yes', label: 'yes' }], allowOther: false, skippable: true }],
})
const origin = { kind: 'tool' as const, name: 'ui_dialog' }

interface Sim {
  model: ThreadModel
  kind?: RunKind
  /** ask_user_question calls still to be shown in this run. */
  asksLeft: number
  asked: number
  took: string[]
  /** The kind of the last command: a node per state and the command that reached it. */
  last?: string
  /** The stubborn tool holds the stop pending. */
  held?: boolean
  /** The extension's own question between runs, while open. */
  extAsk?: string
}

export interface Node {
  commands: Command[]
  key: string
  state: string
}

function simulate(commands: Command[]): Sim {
  const sim: Sim = { model: new ThreadModel('graph'), asksLeft: 0, asked: 0, took: [] }
  sim.model.quiet = true
  for (const c of commands) {
    sim.model.takenHere.clear()
    apply(sim, c)
    sim.took = [...sim.model.takenHere].sort()
    sim.last = c.t === 'answer' ? `answer ${c.how}` : c.t
  }
  return sim
}

const busy = (m: ThreadModel) => m.state === 'running' || m.state.startsWith('aborting')

/** What the demo runtime does once nothing waits on a human: the run's end, then any run a waiting prompt started. */
function runOn(sim: Sim): void {
  const m = sim.model
  for (let i = 0; i < 4 && m.state === 'running' && m.dialogs.length === 0; i++) {
    if (sim.kind === 'slow' || sim.kind === 'stubborn' || sim.kind === 'cut') return
    if (sim.kind === 'ask' && sim.asksLeft > 0) {
      sim.asksLeft--
      m.send({ type: 'ASK', dialogId: `d${++sim.asked}`, spec: question(sim.asked), origin })
      return
    }
    m.queue = []
    m.send({ type: 'SETTLED', aborted: false, unclaimed: [] })
    sim.kind = 'plain' // a run a waiting prompt starts is plain
  }
}

function startRun(sim: Sim, kind: RunKind): void {
  const m = sim.model
  sim.kind = kind
  sim.asksLeft = kind === 'ask' ? 2 : 0
  if (kind === 'confirm' || kind === 'select') m.send({ type: 'ASK', dialogId: `d${++sim.asked}`, spec: confirm, origin })
  else runOn(sim)
}

function stop(sim: Sim): void {
  const m = sim.model
  if (m.state.startsWith('aborting') && sim.kind === 'stubborn' && !sim.held) {
    // the tool hears its signal, asks (refused: the stop is pending) and holds the stop until released
    m.send({ type: 'ASK', dialogId: `s${++sim.asked}`, spec: confirm, origin })
    sim.held = true
    return
  }
  if (m.state.startsWith('aborting') && !sim.held) {
    sim.kind = 'plain'
    sim.asksLeft = 0
    m.send({ type: 'SETTLED', aborted: true, unclaimed: [] })
    runOn(sim)
  }
}

function apply(sim: Sim, c: Command): void {
  const m = sim.model
  switch (c.t) {
    case 'prompt': {
      const wasBusy = busy(m)
      const run = c.run ? m.runNamed(c.run) : undefined
      if (run !== undefined && run < 1) return // `{run: 0}`: a 400, the machine never sees it
      m.prompt('text', c.admission, c.deliverAs, run)
      if (!wasBusy && m.state === 'running') startRun(sim, c.kind)
      return
    }
    case 'abort':
      m.send({ type: 'ABORT', replyTo: 'a', ...(c.run === 'none' ? {} : { run: c.run === 'current' ? m.run : m.run + 7 }) })
      return stop(sim)
    case 'take':
      // the runtime's queue comes back at once and the run goes on
      return void m.send({ type: 'TAKE_QUEUE', replyTo: 't', ...(c.run === 'stale' ? { run: m.run + 7 } : {}) })
    case 'abort-twice':
      m.send({ type: 'ABORT', replyTo: 'a1' })
      m.send({ type: 'ABORT', replyTo: 'a2' })
      return stop(sim)
    case 'abort-and-prompt':
      // the graph takes the race's middle outcome: the prompt lands while the stop is pending
      m.send({ type: 'ABORT', replyTo: 'a' })
      m.prompt('text', 'enqueue', c.deliverAs)
      return stop(sim)
    case 'answer': {
      const id = m.dialogs[0]
      if (c.how === 'spent') return void m.send({ type: 'DIALOG.CANCEL', dialogId: 'spent', replyTo: 'x' })
      if (!id) return void m.send({ type: 'DIALOG.ANSWER', dialogId: 'spent', answer: { confirmed: true }, replyTo: 'x' })
      const ask = sim.kind === 'ask'
      if (c.how === 'wrong') return void m.send({ type: 'DIALOG.ANSWER', dialogId: id, answer: { confirmed: 'yes' }, replyTo: 'x' })
      if (c.how === 'cancel') {
        m.send({ type: 'DIALOG.CANCEL', dialogId: id, replyTo: 'x' })
        sim.asksLeft = 0 // Cancel drains the batch
      } else {
        const answer = ask ? { answers: [{ id: 'q1', ...(c.how === 'skip' ? { skipped: true } : { value: 'yes' }) }] } : { confirmed: true }
        m.send({ type: 'DIALOG.ANSWER', dialogId: id, answer, replyTo: 'x' })
        if (c.how === 'two-tabs') m.send({ type: 'DIALOG.ANSWER', dialogId: id, answer, replyTo: 'y' })
      }
      return runOn(sim)
    }
    case 'timeout':
      if (busy(m)) return
      m.prompt('text', 'enqueue', 'steer')
      sim.kind = 'confirm'
      m.send({ type: 'ASK', dialogId: `d${++sim.asked}`, spec: confirm, origin, timeoutMs: MODEL_TIMEOUT_MS })
      m.expire(`d${sim.asked}`)
      return runOn(sim)
    case 'delete':
      if (m.state !== 'cold') m.send({ type: 'DISPOSE', reason: 'deleted', dialogOutcome: 'cancelled' })
      sim.held = false
      return
    case 'restart':
      if (m.state !== 'cold') m.send({ type: 'DISPOSE', reason: 'shutdown', dialogOutcome: 'aborted' })
      sim.held = false
      return
    case 'release':
      if (!sim.held) return
      sim.held = false
      sim.kind = 'plain'
      m.send({ type: 'SETTLED', aborted: true, unclaimed: [] })
      return runOn(sim)
    case 'cut': {
      if (sim.kind !== 'cut' || m.state !== 'running') return
      // the run ends aborted with no stop asked: pi took one steer into the run (its steering mode
      // is one at a time), and the settle hands the rest to the machine, steering then follow-ups
      const steering = m.queue.filter((q) => q.deliverAs === 'steer').slice(1)
      const unclaimed = [...steering, ...m.queue.filter((q) => q.deliverAs === 'followUp')].map((q) => ({ messageId: q.id, text: q.text }))
      m.queue = []
      sim.kind = 'plain'
      m.send({ type: 'SETTLED', aborted: true, unclaimed })
      return runOn(sim)
    }
    case 'ext-ask':
      if (m.state !== 'idle' || sim.extAsk) return
      sim.extAsk = `e${++sim.asked}`
      return void m.send({ type: 'ASK', dialogId: sim.extAsk, spec: confirm, origin: { kind: 'extension' as const, name: 'walk' } })
    case 'ext-run':
      if (m.state !== 'idle' || sim.extAsk) return
      // the runtime says a run began that no prompt started; the demo model answers it and it settles
      m.send({ type: 'RUN_STARTED' })
      sim.kind = 'plain'
      sim.asksLeft = 0
      return runOn(sim)
    case 'withdraw':
      if (sim.extAsk && m.dialogs.includes(sim.extAsk)) m.withdraw(sim.extAsk)
      sim.extAsk = undefined
      return
    case 'cold-ask':
      if (m.state === 'cold') m.send({ type: 'ASK', dialogId: `c${++sim.asked}`, spec: confirm, origin: { kind: 'extension' as const, name: 'walk' } })
      return apply(sim, P('plain'))
    case 'retire':
      if (m.state === 'idle') m.elapseIdle()
      if (sim.extAsk && !m.dialogs.includes(sim.extAsk)) sim.extAsk = undefined
      return
  }
}

const P = (kind: RunKind, deliverAs: 'steer' | 'followUp' = 'steer', admission: 'enqueue' | 'reject' = 'enqueue', run?: 'current' | 'stale'): Command => ({
  t: 'prompt',
  kind,
  deliverAs,
  admission,
  ...(run ? { run } : {}),
})

/** The commands offered in a state (the walk would turn any other into one of these). */
function commandsFor(sim: Sim, levers: Levers): Command[] {
  const m = sim.model
  if (m.snapshot.status === 'done') return []
  if (levers.extension) {
    const extra: Command[] = []
    if (m.state === 'cold') extra.push({ t: 'cold-ask' })
    if (m.state === 'idle' && !sim.extAsk) extra.push({ t: 'ext-ask' }, { t: 'ext-run' }, P('stubborn'), P('cut'))
    if (m.state === 'running' && sim.kind === 'cut') extra.push({ t: 'cut' })
    if (sim.extAsk && m.dialogs.includes(sim.extAsk)) extra.push({ t: 'withdraw' })
    if (sim.held) extra.push({ t: 'release' })
    if (levers.idle && m.state === 'idle') extra.push({ t: 'retire' })
    return [...baseCommands(sim), ...extra]
  }
  return baseCommands(sim)
}

function baseCommands(sim: Sim): Command[] {
  const m = sim.model
  const out: Command[] = [{ t: 'abort', run: 'none' }, { t: 'abort', run: 'stale' }, { t: 'take', run: 'none' }, { t: 'answer', how: 'spent' }, { t: 'delete' }, { t: 'restart' }]
  if (m.run > 0) out.push({ t: 'abort', run: 'current' })
  // a prompt naming a stale run: refused in idle, while running, and (levers) while a held stop is pending
  if (!busy(m)) out.push(P('plain'), P('confirm'), P('ask'), P('slow'), P('plain', 'followUp', 'enqueue', 'stale'), { t: 'timeout' })
  else
    out.push(
      P('plain'),
      P('plain', 'followUp'),
      P('plain', 'steer', 'reject'),
      P('plain', 'steer', 'enqueue', 'stale'),
      { t: 'abort-twice' },
      { t: 'abort-and-prompt', deliverAs: 'followUp' },
      { t: 'take', run: 'stale' },
    )
  if (m.dialogs.length)
    out.push(
      { t: 'answer', how: 'right' },
      { t: 'answer', how: 'wrong' },
      { t: 'answer', how: 'cancel' },
      { t: 'answer', how: 'two-tabs' },
      ...(sim.kind === 'ask' ? [{ t: 'answer' as const, how: 'skip' as const }] : []),
    )
  return out
}

function keyOf(sim: Sim): string {
  const m = sim.model
  return JSON.stringify({ s: m.state, k: busy(m) ? sim.kind : undefined, d: m.dialogs.length > 0, q: m.queue.length > 0, c: sim.last, h: sim.held === true, e: sim.extAsk !== undefined })
}

/** What the walk's server offers besides HTTP: the walk extension, and a short idle timeout. */
export interface Levers {
  extension?: boolean
  idle?: boolean
}

type GraphSnapshot = { status: 'active' | 'done'; output: undefined; error: undefined; commands: Command[]; key: string }
type GraphEvent = AnyEventObject & { command: Command }

const toEvent = (command: Command): GraphEvent => ({ type: describeCommand(command), command })

/** Every node the commands reach, each with one shortest command sequence to it. */
export function graphPaths(): Node[] {
  const levers: Levers = {}
  const snapshotOf = (commands: Command[]): GraphSnapshot => {
    const sim = simulate(commands)
    return { status: sim.model.snapshot.status === 'done' ? 'done' : 'active', output: undefined, error: undefined, commands, key: keyOf(sim) }
  }
  const logic = {
    config: {},
    transition: (s: GraphSnapshot, e: GraphEvent) => snapshotOf([...s.commands, e.command]),
    getInitialSnapshot: () => snapshotOf([]),
    getPersistedSnapshot: (s: GraphSnapshot) => s,
  } as unknown as ActorLogic<GraphSnapshot, GraphEvent>
  const paths = getShortestPaths(logic, {
    events: (s: GraphSnapshot) => commandsFor(simulate(s.commands), levers).map(toEvent),
    serializeState: (s: GraphSnapshot) => s.key,
    limit: 5000,
  } as never)
  const shortest = paths.map((p) => (p.state as GraphSnapshot).commands).sort((a, b) => a.length - b.length)
  // then one path for each machine transition the state paths miss: a shortest path and one command more
  const covered = new Set<string>()
  const takenBy = (commands: Command[]) => {
    const sim: Sim = { model: new ThreadModel('graph'), asksLeft: 0, asked: 0, took: [] }
    sim.model.quiet = true
    for (const c of commands) apply(sim, c)
    return sim.model.takenHere
  }
  for (const p of shortest) for (const k of takenBy(p)) covered.add(k)
  const covering: Command[][] = []
  for (const p of shortest) {
    for (const c of commandsFor(simulate(p), levers)) {
      const fresh = [...takenBy([...p, c])].filter((k) => !covered.has(k))
      if (fresh.length === 0) continue
      for (const k of fresh) covered.add(k)
      covering.push([...p, c])
    }
  }
  // a path that is the start of another adds nothing the longer one does not replay
  const all = [...shortest, ...covering].filter((p) => p.length > 0)
  const text = all.map((p) => p.map(describeCommand).join(' → '))
  const kept = all.filter((_, i) => !text.some((t, j) => j !== i && t.length > text[i].length && t.startsWith(text[i] + ' → ')))
  const seen = new Set<string>()
  return kept
    .filter((p) => !seen.has(JSON.stringify(p)) && seen.add(JSON.stringify(p)))
    .map((commands) => ({ commands, key: keyOf(simulate(commands)), state: simulate(commands).model.state }))
}

/**
 * Paths for the transitions only the levers reach (the walk extension, a short idle timeout): a
 * breadth-first search over the commands with the levers, from a fresh thread, keeping the first
 * (shortest) path that takes each machine transition the HTTP graph paths do not.
 */
export function leverPaths(levers: Levers, covered: Set<string>, maxDepth = 6): Node[] {
  const done = new Set(covered)
  const out: Command[][] = []
  const seen = new Set<string>()
  let frontier: Command[][] = [[]]
  for (let depth = 0; depth < maxDepth && frontier.length; depth++) {
    const next: Command[][] = []
    for (const path of frontier) {
      // abort+prompt's outcome is the server's race: a lever path takes the pending stop the stubborn tool holds
      for (const c of commandsFor(simulate(path), levers).filter((c) => c.t !== 'abort-and-prompt')) {
        const longer = [...path, c]
        const sim = simulate(longer)
        const fresh = sim.took.filter((k) => !done.has(k))
        if (fresh.length) {
          for (const k of fresh) done.add(k)
          out.push(longer)
        }
        // which queue a prompt waits in matters here: a run cut short runs the steering, hands back the follow-ups
        const key = keyOf(sim) + sim.model.queue.map((q) => q.deliverAs).join()
        if (seen.has(key)) continue
        seen.add(key)
        next.push(longer)
      }
    }
    frontier = next
  }
  return out.map((commands) => ({ commands, key: keyOf(simulate(commands)), state: simulate(commands).model.state }))
}

/** The transitions the paths take in the graph's own simulation. */
export function takenByPaths(paths: Node[]): Set<string> {
  const all = new Set<string>()
  for (const p of paths) {
    const sim: Sim = { model: new ThreadModel('graph'), asksLeft: 0, asked: 0, took: [] }
    sim.model.quiet = true
    for (const c of p.commands) apply(sim, c)
    for (const k of sim.model.takenHere) all.add(k)
  }
  return all
}
