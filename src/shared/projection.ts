/**
 * The projection: one fold `(view, observation) => view` over a thread's feed.
 *
 * The server's snapshot is this fold at some seq; the browser folds the frames that follow with the
 * same function, so "the snapshot equals the fold of the frames" holds by construction. It must stay
 * free of I/O and of anything Node-only: the browser bundle imports it.
 *
 * The fold (`step`) is written once and used two ways: `project` is pure (a new view per
 * observation, as the browser's store wants), and `IncrementalView` keeps one view the host's feed
 * writes in place, so a streamed delta costs O(1) however long the transcript is and the snapshot a
 * joining follower gets is the only O(transcript) step.
 *
 * Cluster nodes keep views this fold built in checkpoints of a thread's log: a change to what it builds
 * from the same frames raises CHECKPOINT_FORMAT (src/host/cluster/mirror-state.ts), so that a view an
 * older fold built is not read back as this one's.
 */
import type { Observation, OpenDialog, Snapshot, TranscriptEntry } from '../schemas/index.js'
import { foldChanges } from './changes-fold.js'
import { applyTerminalFrame } from './terminal-screen.js'

export type ThreadView = Snapshot

export function initialView(threadId: string, transcript: TranscriptEntry[] = [], seq = 0, live = false): ThreadView {
  return {
    type: 'snapshot',
    threadId,
    seq,
    status: { live, busy: false, run: 0 },
    transcript,
    queue: { steering: [], followUp: [] },
    openDialogs: [],
    statusItems: {},
    widgets: {},
    working: { visible: true },
  }
}

/**
 * The fold, written once: what one observation does to a view. It writes into `draft`, a view that
 * belongs to the caller alone, with two rules that keep every earlier view intact:
 *
 *  - the transcript array is copied before its first write (copy-on-write, see `transcriptOf`), and
 *  - nothing below the top level is ever mutated: an entry, a map or a list that changes is replaced
 *    by a new one, so an entry or a map shared with an earlier view never changes under it.
 *
 * `project` runs it on a fresh shallow copy (pure); `IncrementalView` runs it on the one draft it
 * owns, so a streamed delta costs O(1) there and only taking a snapshot is O(transcript).
 */
function step(draft: Draft, o: Observation): void {
  const view = draft.view
  view.seq = o.seq
  switch (o.type) {
    case 'status': {
      // Going cold ends the extensions' session: what they put on screen goes with it.
      if (!o.live && view.status.live) {
        view.statusItems = {}
        view.widgets = {}
        delete view.widgetPlacements
        view.working = { visible: true }
        delete view.liveTitle
      }
      view.status = { live: o.live, busy: o.busy, run: o.run }
      return
    }
    case 'user-message':
      return append(draft, {
        kind: 'user',
        messageId: o.messageId,
        text: o.text,
        run: o.run,
        ...(o.versions ? { versions: o.versions } : {}),
        ...at(o.at),
        ...(o.images?.length ? { images: o.images } : {}),
      })
    case 'assistant-start':
      return append(draft, { kind: 'assistant', messageId: o.messageId, text: '', streaming: true, ...at(o.at) })
    case 'assistant-delta':
      return appendText(draft, o.messageId, o.text)
    case 'assistant-thinking':
      patchLast(draft, (e) => e.kind === 'assistant' && e.messageId === o.messageId, (e) =>
        e.kind === 'assistant' ? { ...e, thinking: (e.thinking ?? '') + o.text } : e,
      )
      return
    case 'assistant-end': {
      const started = draft.view.transcript.findLast((e) => e.kind === 'assistant' && e.messageId === o.messageId)
      const ended = {
        kind: 'assistant',
        messageId: o.messageId,
        ...at(started?.kind === 'assistant' ? started.at : undefined),
        text: o.text,
        streaming: false,
        stopReason: o.stopReason,
        ...(o.model !== undefined ? { model: o.model } : {}),
        ...(o.provider !== undefined ? { provider: o.provider } : {}),
        ...(o.usage !== undefined ? { usage: o.usage } : {}),
        ...(o.thinking !== undefined ? { thinking: o.thinking } : {}),
        ...(o.thinkingMs !== undefined ? { thinkingMs: o.thinkingMs } : {}),
      } as const
      if (!patchLast(draft, (e) => e.kind === 'assistant' && e.messageId === o.messageId, () => ended)) append(draft, ended)
      return
    }
    case 'tool-start':
      return append(draft, { kind: 'tool', toolCallId: o.toolCallId, name: o.name, args: o.args, state: 'running', ...at(o.at) })
    case 'tool-update':
      patchLast(draft, (e) => e.kind === 'tool' && e.toolCallId === o.toolCallId, (e) => (e.kind === 'tool' ? { ...e, partial: o.partial } : e))
      return
    case 'tool-end':
      patchLast(draft, (e) => e.kind === 'tool' && e.toolCallId === o.toolCallId, (e) =>
        e.kind === 'tool' ? { ...withoutPartial(e), state: o.isError ? 'error' : 'done', result: o.result } : e,
      )
      return
    case 'queue':
      view.queue = { steering: o.steering, followUp: o.followUp }
      return
    case 'prompt-rejected':
      return append(draft, {
        kind: 'rejected',
        messageId: o.messageId,
        reason: o.reason,
        ...(o.text !== undefined ? { text: o.text } : {}),
        ...(o.images?.length ? { images: o.images } : {}),
      })
    case 'prompt-handled':
      return append(draft, { kind: 'handled', messageId: o.messageId, text: o.text })
    case 'extension-ui-request': {
      const open: OpenDialog = { id: o.id, dialog: o.dialog, origin: o.origin }
      if (o.expiresAt !== undefined) open.expiresAt = o.expiresAt
      view.openDialogs = [...view.openDialogs.filter((d) => d.id !== o.id), open]
      return
    }
    case 'dialog-settled':
      view.openDialogs = view.openDialogs.filter((d) => d.id !== o.id)
      return
    // A terminal component's screen and typist live on its open question (terminal-screen.ts).
    case 'terminal-frame':
      view.openDialogs = view.openDialogs.map((d) => (d.id === o.id ? { ...d, screen: applyTerminalFrame(d.screen, o) } : d))
      return
    case 'terminal-typist':
      view.openDialogs = view.openDialogs.map((d) => (d.id === o.id ? { ...d, typist: { tab: o.tab, until: o.until } } : d))
      return
    case 'notify':
      // A toast is transient; only the host's own notes about a run (persist) enter the transcript.
      if (o.persist) append(draft, { kind: 'notify', message: o.message, level: o.level, ...(o.compacted ? { compacted: true } : {}) })
      return
    case 'status-item':
      view.statusItems = withKey(view.statusItems, o.key, o.text)
      return
    case 'widget': {
      view.widgets = withKey(view.widgets, o.key, o.lines)
      // A widget set again without a placement goes back to pi's default.
      const placements = withKey(view.widgetPlacements ?? {}, o.key, o.lines !== undefined ? o.placement : undefined)
      if (Object.keys(placements).length > 0) view.widgetPlacements = placements
      else delete view.widgetPlacements
      return
    }
    case 'working':
      view.working = o.message !== undefined ? { message: o.message, visible: o.visible } : { visible: o.visible }
      return
    case 'title':
      view.liveTitle = o.title
      return
    // The editor text belongs to the composers that take it, not to the view.
    case 'editor-text':
      return
    case 'custom-message':
      return append(draft, { kind: 'custom', customType: o.customType, text: o.text })
    case 'settled':
      if (o.aborted) append(draft, { kind: 'stopped', run: o.run })
      return
    case 'failure':
      // A retried call that failed again stays the one retry line; otherwise the failure is shown.
      if (!patchRetry(draft, (e) => ({ ...e, message: o.message }))) append(draft, { kind: 'error', message: o.message })
      return
    case 'retry': {
      const line = { attempt: o.attempt, maxAttempts: o.maxAttempts, message: o.message, state: 'retrying' } as const
      if (patchRetry(draft, (e) => ({ ...e, ...line }))) return
      // The failure shown a moment ago is the one pi retries: it becomes the retry line.
      const last = draft.view.transcript.length - 1
      if (draft.view.transcript[last]?.kind === 'error') transcriptOf(draft)[last] = { kind: 'retry', ...line }
      else append(draft, { kind: 'retry', ...line })
      return
    }
    case 'retry-end':
      patchRetry(draft, (e) => ({
        ...e,
        attempt: o.attempt,
        state: o.success ? 'recovered' : 'failed',
        ...(o.message !== undefined ? { message: o.message } : {}),
      }))
      return
    // The conversation moved to another branch: its transcript, whole, replaces the old one (never written in place).
    case 'branch':
      view.transcript = o.transcript
      draft.ownsTranscript = false
      return
    case 'run-changes':
    case 'workspace-restored':
      view.changes = foldChanges(view.changes, o)
      return
  }
}

type RetryEntry = Extract<TranscriptEntry, { kind: 'retry' }>

/** The retry line of the turn going on (one still `retrying`, after the latest prompt), patched; says whether there was one. */
function patchRetry(draft: Draft, patch: (e: RetryEntry) => RetryEntry): boolean {
  const entries = draft.view.transcript
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]
    if (e.kind === 'user') return false
    if (e.kind === 'retry') {
      if (e.state !== 'retrying') return false
      transcriptOf(draft)[i] = patch(e)
      return true
    }
  }
  return false
}

/** An entry's time, only when known (an absent key, never `at: undefined`, so views compare equal). */
const at = (ms: number | undefined): { at?: number } => (ms !== undefined ? { at: ms } : {})

/** Returns a new view; the view given is never mutated, and what did not change is shared with it. */
export function project(view: ThreadView, o: Observation): ThreadView {
  const draft: Draft = { view: { ...view }, ownsTranscript: false }
  step(draft, o)
  return draft.view
}

/**
 * The same fold, kept incrementally: the host's feed applies every observation here in O(1) for a
 * streamed delta (no copy of the transcript per frame), and `snapshot()` materialises an immutable
 * view — equal to `projectAll(initial, observations so far)` — sharing the transcript until the next
 * write copies it. A snapshot is cached until the next observation, so readers between two frames
 * (followers joining at once, status checks) share one.
 */
export class IncrementalView {
  readonly #draft: Draft
  #snapshot: ThreadView | undefined

  constructor(initial: ThreadView) {
    this.#draft = { view: { ...initial }, ownsTranscript: false }
    this.#snapshot = initial
  }

  get seq(): number {
    return this.#draft.view.seq
  }

  apply(o: Observation): void {
    if (this.#snapshot) {
      // The snapshot handed out shares our transcript: the next write copies it once.
      this.#snapshot = undefined
      this.#draft.ownsTranscript = false
    }
    step(this.#draft, o)
  }

  snapshot(): ThreadView {
    if (!this.#snapshot) {
      this.#snapshot = { ...this.#draft.view }
      this.#draft.ownsTranscript = false
    }
    return this.#snapshot
  }
}

export function projectAll(view: ThreadView, observations: Iterable<Observation>): ThreadView {
  let v = view
  for (const o of observations) v = project(v, o)
  return v
}

/** A copy of `map` with `key` set to `value` (in place, so items keep their order), or without it when undefined. */
function withKey<V>(map: Record<string, V>, key: string, value: V | undefined): Record<string, V> {
  if (value !== undefined) return { ...map, [key]: value }
  const { [key]: _old, ...rest } = map
  return rest
}

/** A view being written by `step`; `ownsTranscript` says whether its transcript array may be written in place. */
interface Draft {
  view: ThreadView
  ownsTranscript: boolean
}

function transcriptOf(draft: Draft): TranscriptEntry[] {
  if (!draft.ownsTranscript) {
    draft.view.transcript = draft.view.transcript.slice()
    draft.ownsTranscript = true
  }
  return draft.view.transcript
}

function append(draft: Draft, entry: TranscriptEntry): void {
  transcriptOf(draft).push(entry)
}

/** Streaming updates touch the newest matching entry, so search from the end. Says whether one matched. */
function patchLast(draft: Draft, match: (e: TranscriptEntry) => boolean, patch: (e: TranscriptEntry) => TranscriptEntry): boolean {
  const entries = draft.view.transcript
  for (let i = entries.length - 1; i >= 0; i--) {
    if (match(entries[i])) {
      const transcript = transcriptOf(draft)
      transcript[i] = patch(transcript[i])
      return true
    }
  }
  return false
}

/**
 * `patchLast` for the one observation that comes per streamed chunk, without the two closures it
 * would take. A V8 string concatenation is O(1) (a rope, flattened once when the snapshot is encoded).
 */
function appendText(draft: Draft, messageId: string, text: string): void {
  const entries = draft.view.transcript
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]
    if (e.kind === 'assistant' && e.messageId === messageId) {
      transcriptOf(draft)[i] = { ...e, text: e.text + text }
      return
    }
  }
}

function withoutPartial<E extends { partial?: unknown }>(entry: E): Omit<E, 'partial'> {
  const { partial: _partial, ...rest } = entry
  return rest
}
