/**
 * The inspector's reads of xstate internals (src/shared/xstate-internals.ts), each on real actors
 * and machines. These pin xstate's private shapes — `_parent`, `logic.id`, `options.systemId`,
 * a microstep's `_transitions`, `toJSON()`'s `#id` initial targets — so an xstate upgrade that moves
 * one fails here, by name, rather than in a picture nobody looks at.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createActor, createMachine, setup, type AnyActorRef, type AnyStateNode, type InspectionEvent } from 'xstate'
import { transitionKey, transitionsOf } from '../../src/machines/diagram.js'
import { threadMachine } from '../../src/machines/thread.machine.js'
import {
  activeStateIds,
  initialChildId,
  machineDefinition,
  machineIdOf,
  microstepTransitions,
  parentOf,
  snapshotOf,
  systemIdOf,
  type StateDef,
} from '../../src/shared/xstate-internals.js'

const SRC = resolve(import.meta.dirname, '../../src')
const ADAPTER = 'shared/xstate-internals.ts'
/** The private reads the adapter owns, as they look in source. */
const PRIVATE = /\._parent\b|\b_transitions\b|\blogic\??\.id\b|options\??\.systemId|\.toJSON\(\)/

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  )
}

const child = createMachine({ id: 'child', initial: 'waiting', states: { waiting: { on: { GO: 'gone' } }, gone: { type: 'final' } } })

/** A parent that invokes a child under a systemId, with an event transition and an eventless one. */
const parent = setup({ actors: { child } }).createMachine({
  id: 'parent',
  initial: 'idle',
  states: {
    idle: { on: { START: 'working' } },
    working: {
      invoke: { id: 'kid', systemId: 'kid-system', src: 'child' },
      initial: 'first',
      states: { first: { always: 'second' }, second: { id: 'custom-second' } },
    },
  },
})

const stops: Array<() => void> = []
afterEach(() => {
  for (const stop of stops.splice(0)) stop()
})

function start() {
  const events: InspectionEvent[] = []
  const actor = createActor(parent, { inspect: (e) => void events.push(e) })
  stops.push(() => actor.stop())
  actor.start()
  return { actor, events }
}

describe('xstate internals the inspector reads', () => {
  it('finds the parent, machine id and systemId of a real invoked actor, and none for the root', () => {
    const { actor, events } = start()
    actor.send({ type: 'START' })
    const kid = snapshotOf(actor).children[0]
    expect(kid?.id).toBe('kid')
    expect(parentOf(kid!)).toBe(actor)
    expect(parentOf(actor)).toBeUndefined()
    expect(machineIdOf(actor)).toBe('parent')
    expect(machineIdOf(kid!)).toBe('child')
    expect(systemIdOf(kid!)).toBe('kid-system')
    // At registration (`@xstate.actor`) the systemId is only in the actor's options.
    const registered = events.find((e) => e.type === '@xstate.actor' && e.actorRef !== actor)!.actorRef as AnyActorRef
    expect(registered).toBe(kid)
    expect(systemIdOf(registered)).toBe('kid-system')
  })

  it("reads a snapshot's status, value, context and children, and a finished child's status", () => {
    const { actor } = start()
    expect(snapshotOf(actor)).toEqual({ status: 'active', value: 'idle', context: {}, children: [] })
    actor.send({ type: 'START' })
    const kid = snapshotOf(actor).children[0]!
    expect(snapshotOf(actor).value).toEqual({ working: 'second' })
    kid.send({ type: 'GO' })
    expect(snapshotOf(kid).status).toBe('done')
  })

  it("finds the transitions each microstep took, event and eventless, keyed as the machine's own transition list", () => {
    const { actor, events } = start()
    actor.send({ type: 'START' })
    const taken = events
      .filter((e): e is Extract<InspectionEvent, { type: '@xstate.microstep' }> => e.type === '@xstate.microstep' && e.actorRef === actor)
      .flatMap((e) => microstepTransitions(e).map((t) => transitionKey(t)))
    expect(taken).toEqual(['parent.idle|START|0', 'parent.working.first|always|0'])
    const known = new Set(transitionsOf(parent).map((t) => t.key))
    for (const key of taken) expect(known).toContain(key)
  })

  it("reads toJSON()'s initial targets as the state nodes' own initial states, for every compound state of the thread machine", () => {
    const def = machineDefinition(threadMachine)
    expect(def).toMatchObject({ id: 'thread', key: 'thread', type: 'compound' })
    const byId = new Map<string, StateDef>()
    const index = (d: StateDef) => {
      byId.set(d.id, d)
      for (const c of Object.values(d.states ?? {})) index(c)
    }
    index(def)
    const compound = (node: AnyStateNode): AnyStateNode[] => [
      ...(node.type === 'compound' ? [node] : []),
      ...(Object.values(node.states) as AnyStateNode[]).flatMap(compound),
    ]
    const nodes = compound(threadMachine.root)
    expect(nodes.length).toBeGreaterThan(1)
    for (const node of nodes) {
      expect(byId.get(node.id)?.type).toBe('compound')
      expect(initialChildId(byId.get(node.id)!)).toBe(node.initial.target[0]!.id)
    }
  })

  it('turns a state value into the active state ids through the definition, custom ids included', () => {
    const { actor } = start()
    actor.send({ type: 'START' })
    const active = activeStateIds(machineDefinition(parent), actor.getSnapshot().value)
    expect(active).toEqual(new Set(['parent', 'parent.working', 'custom-second']))
    // xstate agrees on every one of them.
    const nodes = new Set(actor.getSnapshot()._nodes.map((n) => n.id))
    expect(nodes).toEqual(active)
  })

  it('the host, the server and the inspector page read them only through the adapter', () => {
    const offenders = ['host', 'server', 'ui', 'shared']
      .flatMap((layer) => files(join(SRC, layer)))
      .map((file) => relative(SRC, file))
      .filter((file) => file !== ADAPTER && PRIVATE.test(readFileSync(join(SRC, file), 'utf8')))
    expect(offenders).toEqual([])
  })
})
