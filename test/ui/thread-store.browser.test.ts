/** The browser's thread store: the server's fold, deduped by seq, plus what only this tab knows. */
import { describe, expect, test, vi } from 'vitest'
import { projectAll, initialView } from '../../src/shared/projection.js'
import type { Observation } from '../../src/schemas/index.js'
import { createThreadStore, NOTE_MS, TOAST_MS } from '../../src/ui/thread-store.js'
import { confirmDialog, feed, snapshotOf } from './helpers.js'

const run1 = (n = feed()): Observation[] => [
  n({ type: 'status', live: true, busy: true, run: 1 }),
  n({ type: 'user-message', messageId: 'u1', text: 'hi', run: 1 }),
  n({ type: 'assistant-start', messageId: 'a1' }),
  n({ type: 'assistant-delta', messageId: 'a1', text: 'You ' }),
  n({ type: 'assistant-delta', messageId: 'a1', text: 'said' }),
  n({ type: 'assistant-end', messageId: 'a1', text: 'You said: hi', stopReason: 'stop' }),
  n({ type: 'settled', run: 1, aborted: false }),
  n({ type: 'status', live: true, busy: false, run: 1 }),
]

describe('thread store', () => {
  test('folds frames with the projection, and a replayed frame (seq ≤ its seq) changes nothing', () => {
    const frames = run1()
    const store = createThreadStore('t1')
    store.trigger.snapshot({ snapshot: snapshotOf('t1') })
    for (const o of frames) store.trigger.frame({ observation: o })
    const once = store.getSnapshot().context.view
    expect(once).toEqual(projectAll(initialView('t1', [], 0, true), frames))
    // A reconnect that replays what we already have is a no-op.
    for (const o of frames.slice(3)) store.trigger.frame({ observation: o })
    expect(store.getSnapshot().context.view).toBe(once)
  })

  test('a snapshot replaces the view, even one that dropped a card (which leaves with a note)', () => {
    const n = feed()
    const store = createThreadStore('t1')
    store.trigger.snapshot({ snapshot: snapshotOf('t1', { openDialogs: [confirmDialog()] }) })
    store.trigger.frame({ observation: n({ type: 'notify', message: 'x', level: 'info' }) })
    const fresh = snapshotOf('t1', { seq: 40 })
    store.trigger.snapshot({ snapshot: fresh })
    const ctx = store.getSnapshot().context
    expect(ctx.view).toEqual(fresh)
    expect(ctx.notes.map((x) => [x.title, x.reason])).toEqual([['Deploy?', 'closed']])
  })

  test('dialog-settled: "answered in another tab" unless this tab answered; timeout, stop and cancel say so', () => {
    const n = feed()
    const store = createThreadStore('t1')
    store.trigger.snapshot({ snapshot: snapshotOf('t1') })
    const ask = (id: string) => {
      const d = confirmDialog(id, `Q ${id}`)
      store.trigger.frame({ observation: n({ type: 'extension-ui-request', blocking: true, ...d }) })
    }
    for (const id of ['a', 'b', 'c', 'd', 'e']) ask(id)
    expect(store.getSnapshot().context.view.openDialogs).toHaveLength(5)
    store.trigger.answering({ id: 'b' })
    store.trigger.frame({ observation: n({ type: 'dialog-settled', id: 'a', outcome: 'answered' }) })
    store.trigger.frame({ observation: n({ type: 'dialog-settled', id: 'b', outcome: 'answered' }) })
    store.trigger.frame({ observation: n({ type: 'dialog-settled', id: 'c', outcome: 'timeout' }) })
    store.trigger.frame({ observation: n({ type: 'dialog-settled', id: 'd', outcome: 'aborted' }) })
    store.trigger.frame({ observation: n({ type: 'dialog-settled', id: 'e', outcome: 'cancelled' }) })
    const ctx = store.getSnapshot().context
    expect(ctx.view.openDialogs).toEqual([])
    expect(ctx.notes.map((x) => x.reason)).toEqual(['answered in another tab', 'answered', 'timed out', 'stopped', 'cancelled'])
  })

  test('pending prompts: claimed by user-message, dropped by a stop if never claimed, forgotten at settle', () => {
    const n = feed()
    const store = createThreadStore('t1')
    store.trigger.snapshot({ snapshot: snapshotOf('t1') })
    store.trigger.frame({ observation: n({ type: 'status', live: true, busy: true, run: 1 }) })
    store.trigger.promptSent({ prompt: { messageId: 'q1', text: 'one', run: 1, queued: true, deliverAs: 'steer' } })
    store.trigger.promptSent({ prompt: { messageId: 'q2', text: 'two', run: 1, queued: true, deliverAs: 'steer' } })
    store.trigger.frame({ observation: n({ type: 'user-message', messageId: 'q1', text: 'one', run: 1 }) })
    expect(store.getSnapshot().context.pending.map((p) => p.messageId)).toEqual(['q2'])
    store.trigger.stopped()
    expect(store.getSnapshot().context.pending).toEqual([])
    // A claimed prompt's bubble stays: it is a transcript entry now.
    expect(store.getSnapshot().context.view.transcript.filter((e) => e.kind === 'user')).toHaveLength(1)

    store.trigger.promptSent({ prompt: { messageId: 'q3', text: 'three', run: 1, queued: true } })
    store.trigger.frame({ observation: n({ type: 'settled', run: 1, aborted: true }) })
    expect(store.getSnapshot().context.pending).toEqual([])
  })

  test('a receipt that arrives after its user-message adds no bubble', () => {
    const n = feed()
    const store = createThreadStore('t1')
    store.trigger.snapshot({ snapshot: snapshotOf('t1') })
    store.trigger.frame({ observation: n({ type: 'user-message', messageId: 'm1', text: 'hi', run: 1 }) })
    store.trigger.promptSent({ prompt: { messageId: 'm1', text: 'hi', run: 1, queued: false } })
    expect(store.getSnapshot().context.pending).toEqual([])
  })

  test('notes and toasts leave on their own (the store’s effects), and no timer outlives a store let go of', () => {
    vi.useFakeTimers()
    try {
      const n = feed()
      const life = new AbortController()
      const store = createThreadStore('t1', { signal: life.signal })
      store.trigger.snapshot({ snapshot: snapshotOf('t1', { openDialogs: [confirmDialog()] }) })
      store.trigger.frame({ observation: n({ type: 'notify', message: 'x', level: 'info' }) })
      store.trigger.frame({ observation: n({ type: 'dialog-settled', id: 'd1', outcome: 'timeout' }) })
      expect(store.getSnapshot().context.toasts).toHaveLength(1)
      expect(store.getSnapshot().context.notes).toHaveLength(1)
      vi.advanceTimersByTime(TOAST_MS)
      expect(store.getSnapshot().context.toasts).toEqual([])
      expect(store.getSnapshot().context.notes).toHaveLength(1)
      vi.advanceTimersByTime(NOTE_MS - TOAST_MS)
      expect(store.getSnapshot().context.notes).toEqual([])

      store.trigger.frame({ observation: n({ type: 'notify', message: 'y', level: 'info' }) })
      life.abort()
      expect(vi.getTimerCount()).toBe(0)
    } finally {
      vi.useRealTimers()
    }
  })
})
