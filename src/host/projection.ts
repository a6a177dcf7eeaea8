/**
 * The projection: one pure fold `(view, observation) => view` over a thread's feed.
 *
 * The server's snapshot is this fold at some seq; the browser folds the frames that follow with the
 * same function, so "the snapshot equals the fold of the frames" holds by construction. It must stay
 * free of I/O and of anything Node-only: the browser bundle imports it.
 */
import type { Observation, OpenDialog, Snapshot, TranscriptEntry } from '../schemas/index.js'

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
  }
}

/** Returns a new view; entries that did not change are shared, never mutated. */
export function project(view: ThreadView, o: Observation): ThreadView {
  const next = { ...view, seq: o.seq }
  switch (o.type) {
    case 'status':
      return { ...next, status: { live: o.live, busy: o.busy, run: o.run } }
    case 'user-message':
      return append(next, { kind: 'user', messageId: o.messageId, text: o.text, run: o.run })
    case 'assistant-start':
      return append(next, { kind: 'assistant', messageId: o.messageId, text: '', streaming: true })
    case 'assistant-delta':
      return patchLast(next, (e) => e.kind === 'assistant' && e.messageId === o.messageId, (e) =>
        e.kind === 'assistant' ? { ...e, text: e.text + o.text } : e,
      )
    case 'assistant-end': {
      const ended = { kind: 'assistant', messageId: o.messageId, text: o.text, streaming: false, stopReason: o.stopReason } as const
      const found = next.transcript.some((e) => e.kind === 'assistant' && e.messageId === o.messageId)
      return found
        ? patchLast(next, (e) => e.kind === 'assistant' && e.messageId === o.messageId, () => ended)
        : append(next, ended)
    }
    case 'tool-start':
      return append(next, { kind: 'tool', toolCallId: o.toolCallId, name: o.name, args: o.args, state: 'running' })
    case 'tool-update':
      return patchLast(next, (e) => e.kind === 'tool' && e.toolCallId === o.toolCallId, (e) =>
        e.kind === 'tool' ? { ...e, partial: o.partial } : e,
      )
    case 'tool-end':
      return patchLast(next, (e) => e.kind === 'tool' && e.toolCallId === o.toolCallId, (e) =>
        e.kind === 'tool' ? { ...withoutPartial(e), state: o.isError ? 'error' : 'done', result: o.result } : e,
      )
    case 'queue':
      return { ...next, queue: { steering: o.steering, followUp: o.followUp } }
    case 'prompt-rejected':
      return append(next, { kind: 'rejected', messageId: o.messageId, reason: o.reason })
    case 'prompt-handled':
      return append(next, { kind: 'handled', messageId: o.messageId, text: o.text })
    case 'extension-ui-request': {
      const open: OpenDialog = { id: o.id, dialog: o.dialog, origin: o.origin }
      if (o.expiresAt !== undefined) open.expiresAt = o.expiresAt
      return { ...next, openDialogs: [...next.openDialogs.filter((d) => d.id !== o.id), open] }
    }
    case 'dialog-settled':
      return { ...next, openDialogs: next.openDialogs.filter((d) => d.id !== o.id) }
    case 'notify':
      return append(next, { kind: 'notify', message: o.message, level: o.level })
    case 'settled':
      return o.aborted ? append(next, { kind: 'stopped', run: o.run }) : next
    case 'error':
      return append(next, { kind: 'error', message: o.message })
  }
}

export function projectAll(view: ThreadView, observations: Iterable<Observation>): ThreadView {
  let v = view
  for (const o of observations) v = project(v, o)
  return v
}

function append(view: ThreadView, entry: TranscriptEntry): ThreadView {
  return { ...view, transcript: [...view.transcript, entry] }
}

/** Streaming updates touch the newest matching entry, so search from the end. */
function patchLast(
  view: ThreadView,
  match: (e: TranscriptEntry) => boolean,
  patch: (e: TranscriptEntry) => TranscriptEntry,
): ThreadView {
  for (let i = view.transcript.length - 1; i >= 0; i--) {
    if (match(view.transcript[i])) {
      const transcript = view.transcript.slice()
      transcript[i] = patch(transcript[i])
      return { ...view, transcript }
    }
  }
  return view
}

function withoutPartial<E extends { partial?: unknown }>(entry: E): Omit<E, 'partial'> {
  const { partial: _partial, ...rest } = entry
  return rest
}
