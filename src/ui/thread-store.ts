/**
 * One followed thread in the browser: the server's projection, folded here with the SAME `project`
 * the server uses for snapshots, plus the little this tab knows that the feed does not:
 *
 *  - `pending`: this composer's own prompts whose `user-message` has not arrived yet (optimistic
 *    bubbles, keyed by the receipt's messageId). A claimed prompt becomes a real transcript entry;
 *    a stop drops the unclaimed ones (their texts come back to the draft instead).
 *  - `answering`: dialog ids this tab has answered (or is answering), so a `dialog-settled` can be
 *    told apart: answered here, or "answered in another tab"; `answerLabels` what this tab chose
 *    (Yes, Deny, skipped …) and `refused` the ids whose answer from here was refused (404) because
 *    another tab's answer won the race.
 *  - `notes`: why a card just left (answered here and how, answered in another tab, timed out,
 *    stopped, cancelled), and other things said once (queued texts withdrawn by another tab's stop).
 *  - `rejectedTexts`: the texts of this tab's refused prompts, so their entries can show them.
 *  - `toasts`: extensions' `notify` frames, shown for a moment (not transcript entries, not in snapshots).
 *
 * What is said once rather than kept is emitted, for the pane to act on:
 *
 *  - `returned`: this tab's own texts that will never run and were not handed back to it by a stop
 *    of its own — withdrawn by a stop in another tab (its run settled with them still unclaimed),
 *    refused (`prompt-rejected`, e.g. at shutdown), or kept for a stop that was then refused. The
 *    pane puts them back into the draft, and the images sent with them beside it.
 *  - `editorText`: an `editor-text` frame, for the pane to hand to its composer (only into an empty draft).
 *
 * The store stays a fold: a transition only describes what should follow it. Emitting is one such
 * description; a note or a toast leaving on its own after a while is another (an effect: a timer
 * that sends `noteDismissed` / `toastDismissed` back), run by the store after the transition and
 * cancelled with `signal`.
 *
 * Frames with seq ≤ the view's seq are ignored, and a snapshot replaces the view, so a reconnect
 * neither loses nor doubles anything.
 */
import { createStore, type EnqueueObject, type EventFromStore, type EventObject, type StandardSchemaV1 } from '@xstate/store'
import { initialView, project, type ThreadView } from '../shared/projection.js'
import type { DeliverAs, DialogOutcome, DialogSpec, NotifyLevel, Observation, OpenDialog, PromptImage, Snapshot } from '../schemas/index.js'

export interface PendingPrompt {
  messageId: string
  text: string
  /** The run the receipt named; a settle of this run (or later) means it was claimed or cleared. */
  run: number
  queued: boolean
  deliverAs?: DeliverAs
  /** The images sent with it: shown on its bubble, and given back with its text when a stop hands it back. */
  images?: PromptImage[]
}

/** The images sent with these prompts, as `returned` carries them (absent when none). */
const imagesOf = (prompts: readonly PendingPrompt[]): { images?: PromptImage[] } => {
  const images = prompts.flatMap((p) => p.images ?? [])
  return images.length ? { images } : {}
}

export interface DialogNote {
  id: string
  title: string
  reason: string
  at: number
  /** How the dialog settled (absent for notes that are not about a dialog). */
  outcome?: DialogOutcome
}

export interface Toast {
  id: string
  message: string
  level: NotifyLevel
  at: number
}

/** How long a note (why a card left) and a toast stay before they leave on their own. */
export const NOTE_MS = 8000
export const TOAST_MS = 6000

/** At most this many toasts at once; the oldest leaves first. */
export const MAX_TOASTS = 4

export interface ThreadStoreContext {
  view: ThreadView
  /** False until the first snapshot arrives. */
  synced: boolean
  pending: PendingPrompt[]
  answering: string[]
  answerLabels: Record<string, string>
  refused: string[]
  /** This tab asked for a stop and has not had the receipt yet: its queued prompts come back through it. */
  stopping: boolean
  rejectedTexts: Record<string, string>
  notes: DialogNote[]
  toasts: Toast[]
  /**
   * When this tab saw each message (by messageId) and tool call (by toolCallId) arrive, epoch ms.
   * The snapshot carries no times: what came in it has none, rather than a wrong one.
   */
  arrivedAt: Record<string, number>
}

export function dialogTitle(d: DialogSpec): string {
  if (d.method !== 'questionnaire') return d.title || defaultTitle(d.method)
  if (d.title) return d.title
  return d.questions.length === 1 ? d.questions[0].prompt : 'Questions'
}

function defaultTitle(method: DialogSpec['method']): string {
  return { confirm: 'Confirm', select: 'Choose', input: 'Answer', editor: 'Edit', questionnaire: 'Questions', terminal: 'Terminal' }[method]
}

export const NOT_TAKEN = 'answered in another tab; your answer was not taken'

/**
 * Why a card left. `label` is what this tab chose, when it answered: a choice (Yes, No, Allow once,
 * Deny …) or `skipped`. `refused`: this tab's answer came back 404 — another tab's won the race.
 */
export function settleReason(outcome: DialogOutcome | undefined, answeredHere: boolean, label?: string, refused = false, chosen?: string): string {
  switch (outcome) {
    case 'answered':
      // What another tab chose, when the settle says it (a choice, never a typed answer).
      if (refused) return chosen ? `answered in another tab: ${chosen}; your answer was not taken` : NOT_TAKEN
      if (!answeredHere) return chosen ? `answered in another tab: ${chosen}` : 'answered in another tab'
      if (label === 'skipped') return 'skipped'
      return label ? `answered: ${label}` : 'answered'
    case 'timeout':
      return 'timed out'
    case 'aborted':
      return 'stopped'
    case 'cancelled':
      return 'cancelled'
    default:
      return 'closed'
  }
}

const claimedIds = (view: ThreadView) =>
  new Set(view.transcript.flatMap((e) => (e.kind === 'user' || e.kind === 'rejected' || e.kind === 'handled' ? [e.messageId] : [])))

function note(d: OpenDialog, outcome: DialogOutcome | undefined, ctx: ThreadStoreContext, chosen?: string): DialogNote {
  const reason = settleReason(outcome, ctx.answering.includes(d.id), ctx.answerLabels[d.id], ctx.refused.includes(d.id), chosen)
  return { id: d.id, title: dialogTitle(d.dialog), reason, at: Date.now(), ...(outcome ? { outcome } : {}) }
}

/** What this tab's answer was, in the words of the card's buttons; undefined when there is nothing to add. */
export function answerLabel(dialog: OpenDialog | undefined, body: Record<string, unknown>): string | undefined {
  if (body.cancelled === true) return undefined
  if (typeof body.confirmed === 'boolean') return body.confirmed ? 'Yes' : 'No'
  if (dialog?.dialog.method === 'select' && typeof body.value === 'string') return body.value
  const answers = body.answers
  if (Array.isArray(answers) && answers.length > 0 && answers.every((a) => (a as { skipped?: boolean }).skipped === true)) return 'skipped'
  return undefined
}

/** An emitted event's payload, declared for the types only (nothing validates it: it comes from this file). */
function declared<T extends object>(): StandardSchemaV1<T> {
  return { '~standard': { version: 1, vendor: 'threadhost', validate: (value) => ({ value: value as T }) } }
}

const WITHDRAWN_TITLE = 'Your queued messages'

export interface ThreadStoreOptions {
  /** Aborted when the store is let go of: the timers its effects started are cleared. */
  signal?: AbortSignal
}

export function createThreadStore(threadId: string, { signal }: ThreadStoreOptions = {}) {
  /** `fn` after `ms`, unless the store was let go of first. */
  const later = (ms: number, fn: () => void) => {
    if (signal?.aborted) return
    const cancel = () => clearTimeout(timer)
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', cancel)
      fn()
    }, ms)
    signal?.addEventListener('abort', cancel, { once: true })
  }
  /** Notes and toasts leave on their own: the ones a transition added get their timers. */
  const expire = (enq: Pick<EnqueueObject<ThreadStoreContext, EventObject>, 'effect'>, before: ThreadStoreContext, after: ThreadStoreContext) => {
    const had = new Set([...before.notes, ...before.toasts].map((x) => x.id))
    const dismiss = (ms: number, event: ThreadStoreEvent<'noteDismissed' | 'toastDismissed'>) =>
      enq.effect(({ send }) => later(ms, () => send(event)))
    for (const n of after.notes) if (!had.has(n.id)) dismiss(NOTE_MS, { type: 'noteDismissed', id: n.id })
    for (const t of after.toasts) if (!had.has(t.id)) dismiss(TOAST_MS, { type: 'toastDismissed', id: t.id })
    return after
  }
  return createStore({
    schemas: {
      emitted: { returned: declared<{ texts: string[]; images?: PromptImage[] }>(), editorText: declared<{ text: string }>() },
    },
    context: {
      view: initialView(threadId),
      synced: false,
      pending: [],
      answering: [],
      answerLabels: {},
      refused: [],
      stopping: false,
      rejectedTexts: {},
      notes: [],
      toasts: [],
      arrivedAt: {},
    } as ThreadStoreContext,
    on: {
      snapshot: (ctx, e: { snapshot: Snapshot }, enq) => {
        const view = e.snapshot
        const open = new Set(view.openDialogs.map((d) => d.id))
        // Cards that vanished while we were away leave with a note, not silently.
        const gone = ctx.synced ? ctx.view.openDialogs.filter((d) => !open.has(d.id)) : []
        const claimed = claimedIds(view)
        return expire(enq, ctx, {
          ...ctx,
          view,
          synced: true,
          pending: ctx.pending.filter((p) => !claimed.has(p.messageId)),
          notes: [...ctx.notes, ...gone.map((d) => note(d, undefined, ctx))],
        })
      },
      frame: (ctx, e: { observation: Observation }, enq) => {
        const o = e.observation
        if (o.seq <= ctx.view.seq) return ctx
        const view = project(ctx.view, o)
        let { pending, notes, toasts, rejectedTexts, arrivedAt } = ctx
        switch (o.type) {
          case 'assistant-start':
          case 'prompt-handled':
            arrivedAt = { ...arrivedAt, [o.messageId]: Date.now() }
            break
          case 'tool-start':
            arrivedAt = { ...arrivedAt, [o.toolCallId]: Date.now() }
            break
          case 'notify':
            if (!o.persist) toasts = [...toasts, { id: `toast:${o.seq}`, message: o.message, level: o.level, at: Date.now() }].slice(-MAX_TOASTS)
            break
          case 'editor-text':
            enq.emit.editorText({ text: o.text })
            break
          case 'user-message':
            pending = pending.filter((p) => p.messageId !== o.messageId)
            arrivedAt = { ...arrivedAt, [o.messageId]: Date.now() }
            break
          case 'prompt-rejected': {
            // One of ours will never run (e.g. the server shut down): its text comes back, and is shown.
            const mine = pending.find((p) => p.messageId === o.messageId)
            pending = pending.filter((p) => p.messageId !== o.messageId)
            if (mine) {
              rejectedTexts = { ...rejectedTexts, [o.messageId]: mine.text }
              enq.emit.returned({ texts: [mine.text], ...imagesOf([mine]) })
            }
            break
          }
          case 'settled': {
            // Nothing behind a settled run is still waiting: it was claimed, or a stop cleared it.
            const over = pending.filter((p) => p.run <= o.run)
            pending = pending.filter((p) => p.run > o.run)
            const unclaimed = over.filter((p) => p.queued)
            if (unclaimed.length === 0) break
            if (ctx.stopping) {
              // Our own stop: its receipt hands these texts back; keep them until it comes.
              pending = [...unclaimed, ...pending]
              break
            }
            // Another tab's Stop or take-back took them (the server handed them to that tab): they are ours, put them back.
            const texts = unclaimed.map((p) => p.text)
            enq.emit.returned({ texts, ...imagesOf(unclaimed) })
            notes = [
              ...notes,
              {
                id: `withdrawn:${o.seq}`,
                title: WITHDRAWN_TITLE,
                reason: `${texts.length === 1 ? 'one was' : `${texts.length} were`} withdrawn in another tab (its Stop or Alt+Up); back in your draft`,
                at: Date.now(),
              },
            ]
            break
          }
          case 'dialog-settled': {
            const d = ctx.view.openDialogs.find((x) => x.id === o.id)
            if (d) notes = [...notes, note(d, o.outcome, ctx, o.chosen)]
            break
          }
        }
        return expire(enq, ctx, { ...ctx, view, pending, notes, toasts, rejectedTexts, arrivedAt })
      },
      promptSent: (ctx, e: { prompt: PendingPrompt }) => {
        if (claimedIds(ctx.view).has(e.prompt.messageId)) return ctx
        return { ...ctx, pending: [...ctx.pending.filter((p) => p.messageId !== e.prompt.messageId), e.prompt] }
      },
      /** This tab asks for a stop: until its receipt, its own queued prompts are the receipt's to return. */
      stopping: (ctx) => ({ ...ctx, stopping: true }),
      /** This tab stopped the run: the prompts the runtime never claimed leave the transcript. */
      stopped: (ctx) => {
        const claimed = claimedIds(ctx.view)
        return { ...ctx, stopping: false, pending: ctx.pending.filter((p) => claimed.has(p.messageId)) }
      },
      /** The stop was refused (nothing in flight any more): prompts a settle kept for it are ours again. */
      stopFailed: (ctx, _: unknown, enq) => {
        if (ctx.view.status.busy) return { ...ctx, stopping: false }
        const left = ctx.pending.filter((p) => p.queued && p.run <= ctx.view.status.run)
        if (left.length === 0) return { ...ctx, stopping: false }
        enq.emit.returned({ texts: left.map((p) => p.text), ...imagesOf(left) })
        return { ...ctx, stopping: false, pending: ctx.pending.filter((p) => !left.includes(p)) }
      },
      /** A note of the pane's own (e.g. which restored texts were queued in another tab). */
      noted: (ctx, e: { note: DialogNote }, enq) => expire(enq, ctx, { ...ctx, notes: [...ctx.notes.filter((n) => n.id !== e.note.id), e.note] }),
      answering: (ctx, e: { id: string; label?: string }) => ({
        ...ctx,
        answering: ctx.answering.includes(e.id) ? ctx.answering : [...ctx.answering, e.id],
        answerLabels: e.label ? { ...ctx.answerLabels, [e.id]: e.label } : ctx.answerLabels,
      }),
      /**
       * This tab's answer was not taken. `refused`: 404, the question was no longer open — if it was
       * answered, another tab's answer won; a note already written as "answered here" is corrected.
       */
      answerFailed: (ctx, e: { id: string; refused?: boolean }) => {
        const answering = ctx.answering.filter((x) => x !== e.id)
        if (!e.refused) return { ...ctx, answering }
        const notes = ctx.notes.map((n) => (n.id === e.id && n.outcome === 'answered' ? { ...n, reason: NOT_TAKEN } : n))
        return { ...ctx, answering, notes, refused: ctx.refused.includes(e.id) ? ctx.refused : [...ctx.refused, e.id] }
      },
      noteDismissed: (ctx, e: { id: string }) => ({ ...ctx, notes: ctx.notes.filter((n) => n.id !== e.id) }),
      toastDismissed: (ctx, e: { id: string }) => ({ ...ctx, toasts: ctx.toasts.filter((t) => t.id !== e.id) }),
    },
  })
}

export type ThreadStore = ReturnType<typeof createThreadStore>
type ThreadStoreEvent<T extends string> = Extract<EventFromStore<ThreadStore>, { type: T }>
