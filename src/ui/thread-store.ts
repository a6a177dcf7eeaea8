/**
 * One followed thread in the browser: the server's projection, folded here with the SAME `project`
 * the server uses for snapshots, plus the little this tab knows that the feed does not:
 *
 *  - `pending`: this composer's own prompts whose `user-message` has not arrived yet (optimistic
 *    bubbles, keyed by the receipt's messageId). A claimed prompt becomes a real transcript entry;
 *    a stop drops the unclaimed ones (their texts come back to the draft instead).
 *  - `answering`: dialog ids this tab has answered (or is answering), so a `dialog-settled` can be
 *    told apart: answered here, or "answered in another tab".
 *  - `notes`: why a card just left (answered in another tab, timed out, stopped, cancelled).
 *  - `toasts`: extensions' `notify` frames, shown for a moment (not transcript entries, not in snapshots).
 *  - `editorText` / `title`: the latest `editor-text` and `title` frames, with their seq, for the
 *    pane to hand to its composer (only into an empty draft) and its header.
 *
 * Frames with seq ≤ the view's seq are ignored, and a snapshot replaces the view, so a reconnect
 * neither loses nor doubles anything.
 */
import { createStore } from '@xstate/store'
import { initialView, project, type ThreadView } from '../shared/projection.js'
import type { DeliverAs, DialogOutcome, DialogSpec, NotifyLevel, Observation, OpenDialog, Snapshot } from '../schemas/index.js'

export interface PendingPrompt {
  messageId: string
  text: string
  /** The run the receipt named; a settle of this run (or later) means it was claimed or cleared. */
  run: number
  queued: boolean
  deliverAs?: DeliverAs
}

export interface DialogNote {
  id: string
  title: string
  reason: string
  at: number
}

export interface Toast {
  id: string
  message: string
  level: NotifyLevel
  at: number
}

/** At most this many toasts at once; the oldest leaves first. */
export const MAX_TOASTS = 4

export interface ThreadStoreContext {
  view: ThreadView
  /** False until the first snapshot arrives. */
  synced: boolean
  pending: PendingPrompt[]
  answering: string[]
  notes: DialogNote[]
  toasts: Toast[]
  editorText?: { text: string; seq: number }
  title?: { title: string; seq: number }
}

export function dialogTitle(d: DialogSpec): string {
  if (d.method !== 'questionnaire') return d.title || defaultTitle(d.method)
  if (d.title) return d.title
  return d.questions.length === 1 ? d.questions[0].prompt : 'Questions'
}

function defaultTitle(method: DialogSpec['method']): string {
  return { confirm: 'Confirm', select: 'Choose', input: 'Answer', editor: 'Edit', questionnaire: 'Questions' }[method]
}

export function settleReason(outcome: DialogOutcome | undefined, answeredHere: boolean): string {
  switch (outcome) {
    case 'answered':
      return answeredHere ? 'answered' : 'answered in another tab'
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

function note(d: OpenDialog, outcome: DialogOutcome | undefined, answering: string[]): DialogNote {
  return { id: d.id, title: dialogTitle(d.dialog), reason: settleReason(outcome, answering.includes(d.id)), at: Date.now() }
}

export function createThreadStore(threadId: string) {
  return createStore({
    context: {
      view: initialView(threadId),
      synced: false,
      pending: [],
      answering: [],
      notes: [],
      toasts: [],
    } as ThreadStoreContext,
    on: {
      snapshot: (ctx, e: { snapshot: Snapshot }) => {
        const view = e.snapshot
        const open = new Set(view.openDialogs.map((d) => d.id))
        // Cards that vanished while we were away leave with a note, not silently.
        const gone = ctx.synced ? ctx.view.openDialogs.filter((d) => !open.has(d.id)) : []
        const claimed = claimedIds(view)
        return {
          ...ctx,
          view,
          synced: true,
          pending: ctx.pending.filter((p) => !claimed.has(p.messageId)),
          notes: [...ctx.notes, ...gone.map((d) => note(d, undefined, ctx.answering))],
        }
      },
      frame: (ctx, e: { observation: Observation }) => {
        const o = e.observation
        if (o.seq <= ctx.view.seq) return ctx
        const view = project(ctx.view, o)
        let { pending, notes, toasts, editorText, title } = ctx
        switch (o.type) {
          case 'notify':
            if (!o.persist) toasts = [...toasts, { id: `toast:${o.seq}`, message: o.message, level: o.level, at: Date.now() }].slice(-MAX_TOASTS)
            break
          case 'editor-text':
            editorText = { text: o.text, seq: o.seq }
            break
          case 'title':
            title = { title: o.title, seq: o.seq }
            break
          case 'user-message':
          case 'prompt-rejected':
            pending = pending.filter((p) => p.messageId !== o.messageId)
            break
          case 'settled':
            // Nothing behind a settled run is still waiting: it was claimed, or a stop cleared it.
            pending = pending.filter((p) => p.run > o.run)
            break
          case 'dialog-settled': {
            const d = ctx.view.openDialogs.find((x) => x.id === o.id)
            if (d) notes = [...notes, note(d, o.outcome, ctx.answering)]
            break
          }
        }
        return { ...ctx, view, pending, notes, toasts, editorText, title }
      },
      promptSent: (ctx, e: { prompt: PendingPrompt }) => {
        if (claimedIds(ctx.view).has(e.prompt.messageId)) return ctx
        return { ...ctx, pending: [...ctx.pending.filter((p) => p.messageId !== e.prompt.messageId), e.prompt] }
      },
      /** This tab stopped the run: the prompts the runtime never claimed leave the transcript. */
      stopped: (ctx) => {
        const claimed = claimedIds(ctx.view)
        return { ...ctx, pending: ctx.pending.filter((p) => claimed.has(p.messageId)) }
      },
      answering: (ctx, e: { id: string }) =>
        ctx.answering.includes(e.id) ? ctx : { ...ctx, answering: [...ctx.answering, e.id] },
      answerFailed: (ctx, e: { id: string }) => ({ ...ctx, answering: ctx.answering.filter((x) => x !== e.id) }),
      noteDismissed: (ctx, e: { id: string }) => ({ ...ctx, notes: ctx.notes.filter((n) => n.id !== e.id) }),
      toastDismissed: (ctx, e: { id: string }) => ({ ...ctx, toasts: ctx.toasts.filter((t) => t.id !== e.id) }),
    },
  })
}

export type ThreadStore = ReturnType<typeof createThreadStore>
