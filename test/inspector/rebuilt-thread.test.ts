/**
 * A thread built again before its old actor retired (thread-system.ts gives it an actor of its own
 * meanwhile): the old actor's retirement, which comes after, must not take the new one off the
 * inspector — its runs would go unrecorded until the next inspector session.
 */
import { describe, expect, it } from 'vitest'
import { Feed } from '../../src/host/feed.js'
import { Inspection, type InspectionRecord, type LiveSource } from '../../src/host/inspection.js'
import { LiveThread } from '../../src/host/live-thread.js'
import { threadSystem } from '../../src/host/thread-system.js'
import { initialView } from '../../src/shared/projection.js'
import { FakeRuntime } from '../host/fake-runtime.js'

describe('a thread built again', () => {
  it("stays watched when its old actor retires after it started, and the new actor's prompt is recorded", async () => {
    let changed: Parameters<LiveSource['onLiveChange']>[0] = () => {}
    const source: LiveSource = { liveThreads: () => [], onLiveChange: (listener) => ((changed = listener), () => {}) }
    const inspection = new Inspection(source)
    const seen: InspectionRecord[] = []
    const client = inspection.connect((r) => seen.push(r))
    const system = threadSystem()
    const build = () => {
      const thread = new LiveThread({ threadId: 't1', feed: new Feed(initialView('t1')), run: 0, idleMs: 60_000, system, onRetired: () => {} })
      thread.attach(new FakeRuntime(thread.ui))
      return thread
    }
    const old = build()
    changed(old, 'started')
    const again = build()
    changed(again, 'started')
    changed(old, 'retired')
    expect(inspection.attachedThreads).toEqual(['t1'])

    seen.length = 0
    await again.prompt({ text: 'hello', admission: 'reject', deliverAs: 'steer' })
    expect(seen.some((r) => r.kind === 'event' && r.actorId === 'thread:t1')).toBe(true)
    client.close()
    inspection.dispose()
    await Promise.all([old.dispose('deleted', 'cancelled'), again.dispose('deleted', 'cancelled')])
  })
})
