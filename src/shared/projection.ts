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
    statusItems: {},
    widgets: {},
    working: { visible: true },
  }
}

/** Returns a new view; entries that did not change are shared, never mutated. */
export function project(view: ThreadView, o: Observation): ThreadView {
  const next = { ...view, seq: o.seq }
  switch (o.type) {
    case 'status': {
      const status = { live: o.live, busy: o.busy, run: o.run }
      // Going cold ends the extensions' session: what they put on screen goes with it.
      if (!o.live && view.status.live) return { ...next, status, statusItems: {}, widgets: {}, working: { visible: true } }
      return { ...next, status }
    }
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
      // A toast is transient; only the host's own notes about a run (persist) enter the transcript.
      return o.persist ? append(next, { kind: 'notify', message: o.message, level: o.level }) : next
    case 'status-item':
      return { ...next, statusItems: withKey(next.statusItems, o.key, o.text) }
    case 'widget':
      return { ...next, widgets: withKey(next.widgets, o.key, o.lines) }
    case 'working':
      return { ...next, working: o.message !== undefined ? { message: o.message, visible: o.visible } : { visible: o.visible } }
    // The title lives in the thread's summary (the registry persists it); the editor text belongs to
    // the composers that take it. Neither is part of the view.
    case 'title':
    case 'editor-text':
      return next
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

/** A copy of `map` with `key` set to `value` (in place, so items keep their order), or without it when undefined. */
function withKey<V>(map: Record<string, V>, key: string, value: V | undefined): Record<string, V> {
  if (value !== undefined) return { ...map, [key]: value }
  const { [key]: _old, ...rest } = map
  return rest
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
