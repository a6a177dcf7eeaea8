import { loadElk } from '../../src/ui/inspector/elk.js'
import { describe, expect, it } from 'vitest'
import { transitionsOf } from '../../src/machines/diagram.js'
import { threadMachine } from '../../src/machines/thread.machine.js'
import { dialogMachine } from '../../src/machines/dialog.machine.js'
import { activeStateIds, machineDefinition } from '../../src/shared/xstate-internals.js'
import { layoutMachine } from '../../src/ui/inspector/layout.js'
import type { MachineInfo } from '../../src/ui/inspector/types.js'

const thread: MachineInfo = {
  machineId: 'thread',
  definition: machineDefinition(threadMachine),
  transitions: transitionsOf(threadMachine),
}

const inside = (a: { x: number; y: number; width: number; height: number }, b: typeof a) =>
  a.x >= b.x && a.y >= b.y && a.x + a.width <= b.x + b.width && a.y + a.height <= b.y + b.height

describe('statechart layout', () => {
  it('nests compound states inside their parent, draws every targeted transition, lists targetless ones inside', async () => {
    const d = await layoutMachine(await loadElk(), thread)
    const byId = new Map(d.states.map((s) => [s.id, s]))
    expect([...byId.keys()].sort()).toEqual(
      ['thread', 'thread.cold', 'thread.idle', 'thread.running', 'thread.aborting', 'thread.aborting.clearing', 'thread.aborting.stopping', 'thread.retiring', 'thread.disposing', 'thread.disposed'].sort(),
    )
    expect(inside(byId.get('thread.aborting.clearing')!, byId.get('thread.aborting')!)).toBe(true)
    expect(inside(byId.get('thread.running')!, byId.get('thread')!)).toBe(true)
    const targeted = thread.transitions.filter((t) => t.targets.length > 0)
    expect(new Set(d.edges.filter((e) => !e.initial).map((e) => e.key))).toEqual(new Set(targeted.map((t) => t.key)))
    expect(byId.get('thread.running')!.internal.map((t) => t.event)).toContain('ASK')
    // Each compound state marks the child it enters first.
    expect(d.edges.filter((e) => e.initial).map((e) => e.key).sort()).toEqual(['thread.aborting|initial', 'thread|initial'])
    expect(d.edges.every((e) => e.points.length >= 2 && e.points.every((p) => p.x >= 0 && p.x <= d.width && p.y >= 0 && p.y <= d.height))).toBe(true)
  })

  it('an active state value names the state and all its ancestors', () => {
    expect(activeStateIds(thread.definition, { aborting: 'clearing' })).toEqual(new Set(['thread', 'thread.aborting', 'thread.aborting.clearing']))
    expect(activeStateIds(machineDefinition(dialogMachine), 'open')).toEqual(new Set(['dialog', 'dialog.open']))
  })
})
