/**
 * Drawing a machine from its own definition, so docs/machines.md cannot drift from the code.
 *
 * `transitionsOf(machine)` walks `machine.root` (not `toJSON()`, which leaves out eventless
 * `always` transitions) and lists every transition the machine defines, each with a stable key
 * `source|event|index` — the same key whichever `machine.provide(...)` copy it is read from, so a
 * test can match the transitions an actor took (the `@xstate.microstep` inspection events) against
 * the ones the machine defines. `toMermaid(machine)` renders that list as a `stateDiagram-v2`.
 *
 * Pure: no I/O, and nothing here looks at an actor.
 */
import type { AnyStateMachine, AnyStateNode } from 'xstate'

/** The event type shown for an eventless (`always`) transition. */
export const ALWAYS = 'always'

export interface TransitionInfo {
  /** `source|event|index`: index among the source's transitions for that event, in priority order. */
  key: string
  /** The full id of the state node that defines the transition, e.g. `thread.aborting.stopping`. */
  source: string
  /** The event type, `always` for an eventless transition. */
  event: string
  /** The guard's name, when it has one. */
  guard?: string
  /** Full ids of the target state nodes; empty for a targetless (internal) transition. */
  targets: string[]
  /** A targeted transition that exits and re-enters its target. */
  reenter: boolean
}

interface TransitionLike {
  source: AnyStateNode
  eventType: string
  guard?: unknown
  target?: readonly AnyStateNode[]
  reenter?: boolean
}

/** Every state node below the root, depth first, in document order. */
export function stateNodesOf(machine: AnyStateMachine): AnyStateNode[] {
  const out: AnyStateNode[] = []
  const walk = (node: AnyStateNode) => {
    for (const child of Object.values(node.states) as AnyStateNode[]) {
      out.push(child)
      walk(child)
    }
  }
  walk(machine.root)
  return out
}

function guardName(guard: unknown): string | undefined {
  if (guard === undefined) return undefined
  if (typeof guard === 'string') return guard
  if (typeof guard === 'function') return guard.name || 'inline'
  if (typeof guard === 'object' && guard !== null && 'type' in guard) return String((guard as { type: unknown }).type)
  return 'inline'
}

/** The key of one transition definition, as `transitionsOf` names it. Works on any provided copy. */
export function transitionKey(t: TransitionLike): string {
  const source = t.source
  const isAlways = !t.eventType
  const list: readonly unknown[] = isAlways ? (source.always ?? []) : (source.transitions.get(t.eventType) ?? [])
  return `${source.id}|${isAlways ? ALWAYS : t.eventType}|${list.indexOf(t)}`
}

/** Every transition the machine defines: the root's first, then each state node's, in document order. */
export function transitionsOf(machine: AnyStateMachine): TransitionInfo[] {
  const out: TransitionInfo[] = []
  for (const node of [machine.root, ...stateNodesOf(machine)]) {
    const lists: [string, readonly TransitionLike[]][] = [
      ...([...node.transitions.entries()] as [string, TransitionLike[]][]),
    ]
    if (node.always?.length) lists.push(['', node.always as TransitionLike[]])
    for (const [event, list] of lists) {
      list.forEach((t, index) => {
        const info: TransitionInfo = {
          key: `${node.id}|${event || ALWAYS}|${index}`,
          source: node.id,
          event: event || ALWAYS,
          targets: (t.target ?? []).map((s) => s.id),
          reenter: Boolean(t.reenter),
        }
        const guard = guardName(t.guard)
        if (guard !== undefined) info.guard = guard
        out.push(info)
      })
    }
  }
  return out
}

/**
 * How an event reads in a diagram: a delayed transition's event (`xstate.after.<delay>.<state id>`)
 * as `after <delay>`; any other as it is.
 */
export function eventLabel(event: string): string {
  const after = /^xstate\.after\.([^.]+)\./.exec(event)
  return after ? `after ${after[1]}` : event
}

/**
 * The machine as a mermaid `stateDiagram-v2`: states (nested ones as composite states), the initial
 * and final markers, and one arrow per transition labelled `EVENT [guard]` (`after <delay>` for a delay). A targetless transition
 * is drawn as a self-loop on the state that defines it; transitions defined on the root (they apply
 * in every state) are drawn on a composite state named after the machine.
 */
export function toMermaid(machine: AnyStateMachine): string {
  const nodes = stateNodesOf(machine)
  const keyCount = new Map<string, number>()
  for (const n of nodes) keyCount.set(n.key, (keyCount.get(n.key) ?? 0) + 1)
  const rootId = machine.root.id
  const transitions = transitionsOf(machine)
  const wrapRoot = transitions.some((t) => t.source === rootId)
  /** Mermaid ids: the state's key when unique in the machine, else its path joined by `_`. */
  const name = (node: AnyStateNode): string =>
    node === machine.root ? rootId : keyCount.get(node.key) === 1 ? node.key : node.path.join('_')
  const byId = new Map<string, AnyStateNode>([[rootId, machine.root], ...nodes.map((n) => [n.id, n] as const)])
  const label = (t: TransitionInfo) =>
    `${eventLabel(t.event)}${t.guard ? ` [${t.guard}]` : ''}${t.reenter ? ' (reenter)' : ''}`

  const lines: string[] = ['stateDiagram-v2']
  const emit = (depth: number, text: string) => lines.push(`${'  '.repeat(depth)}${text}`)

  const drawChildren = (parent: AnyStateNode, depth: number) => {
    const children = Object.values(parent.states) as AnyStateNode[]
    const initial = (parent.config as { initial?: string }).initial
    if (initial !== undefined) emit(depth, `[*] --> ${name(parent.states[initial] as AnyStateNode)}`)
    for (const child of children) {
      if (name(child) !== child.key) emit(depth, `state "${child.key}" as ${name(child)}`)
      if (Object.keys(child.states).length > 0) {
        emit(depth, `state ${name(child)} {`)
        drawChildren(child, depth + 1)
        emit(depth, '}')
      }
    }
    for (const child of children) drawTransitions(child, depth)
    for (const child of children) if (child.type === 'final') emit(depth, `${name(child)} --> [*]`)
  }

  const drawTransitions = (node: AnyStateNode, depth: number) => {
    for (const t of transitions.filter((x) => x.source === node.id)) {
      const targets = t.targets.length > 0 ? t.targets.map((id) => byId.get(id)!) : [node]
      for (const target of targets) emit(depth, `${name(node)} --> ${name(target)} : ${label(t)}`)
    }
  }

  if (wrapRoot) {
    emit(1, `[*] --> ${rootId}`)
    emit(1, `state ${rootId} {`)
    drawChildren(machine.root, 2)
    emit(1, '}')
    drawTransitions(machine.root, 1)
  } else {
    drawChildren(machine.root, 1)
  }
  return lines.join('\n')
}
