/**
 * The inspector's cost rule: a host nobody inspects makes no inspection record and has no
 * observer on any actor system, so xstate's dispatcher returns before building an event.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { AnyActorRef } from 'xstate'
import { confirm, openDialogId, tick, world, type World } from './setup.js'

let w: World
afterEach(() => w?.close())

/** A full thread life: build, run, a dialog asked and answered, settle, a second run, stop. */
async function workload(threadId: string): Promise<void> {
  await w.prompt(threadId, 'hello')
  const fake = w.runtimes.get(threadId)
  void fake.ui.ask(confirm)
  w.registry.answer(threadId, { id: openDialogId(w, threadId), confirmed: true })
  fake.settle()
  await w.prompt(threadId, 'again')
  w.registry.abort(threadId)
  await new Promise((r) => setTimeout(r, 20))
  await tick()
}

describe('no inspector connected', () => {
  it('a run makes no inspection record and never attaches an observer to an actor system', async () => {
    w = await world()
    const inspectCalls = vi.fn()
    w.registry.onLiveChange((thread, event) => {
      if (event !== 'started') return
      const system = (thread.actor as AnyActorRef).system
      const original = system.inspect.bind(system)
      system.inspect = (observer: Parameters<typeof original>[0]) => (inspectCalls(thread.threadId), original(observer))
    })
    await workload('t1')
    await workload('t2')
    expect(w.inspection.allocated).toBe(0)
    expect(w.inspection.head).toBe(0)
    expect(w.inspection.attachedThreads).toEqual([])
    expect(inspectCalls).not.toHaveBeenCalled()

    // The same counter does move once someone watches, so the zero above is not vacuous…
    const session = w.inspection.connect(() => {})
    expect(inspectCalls.mock.calls.map(([id]) => id).sort()).toEqual(['t1', 't2'])
    await workload('t3')
    const watched = w.inspection.allocated
    expect(watched).toBeGreaterThan(0)

    // …and stops again when the last one leaves: the observers are gone with it.
    session.close()
    expect(w.inspection.attachedThreads).toEqual([])
    await workload('t4')
    w.runtimes.get('t1').settle()
    await w.prompt('t1', 'after the inspector left')
    expect(w.inspection.allocated).toBe(watched)
  })
})
