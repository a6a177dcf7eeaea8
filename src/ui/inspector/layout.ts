/**
 * A machine definition laid out as a statechart: states as boxes (compound ones containing their
 * children), one arrow per targeted transition, and targetless transitions listed inside the state
 * that defines them (drawn as self-loops they would drown the picture). ELK does the geometry;
 * every coordinate here is absolute, so the SVG needs no nested transforms.
 */
import type { ElkExtendedEdge, ElkNode } from 'elkjs/lib/elk-api.js'
import { initialChildId } from '../../shared/xstate-internals.js'
import type { MachineInfo, StateDef, TransitionInfo } from './types.js'

export interface DrawnState {
  id: string
  key: string
  type: string
  x: number
  y: number
  width: number
  height: number
  compound: boolean
  depth: number
  /** Targetless transitions of this state, drawn as lines of text under its name. */
  internal: TransitionInfo[]
}

export interface DrawnEdge {
  key: string
  label: string
  points: { x: number; y: number }[]
  labelAt?: { x: number; y: number; width: number; height: number }
  initial: boolean
}

export interface Drawing {
  width: number
  height: number
  states: DrawnState[]
  edges: DrawnEdge[]
}

export interface Elk {
  layout(graph: ElkNode): Promise<ElkNode>
}

const CHAR = 7
const LINE = 15
const HEAD = 26

export const transitionLabel = (t: TransitionInfo): string => `${t.event}${t.guard ? ` [${t.guard}]` : ''}`

const textWidth = (s: string) => Math.ceil(s.length * CHAR) + 16

/** The ELK graph of a machine: the root state is the outermost box. */
export function toElkGraph(machine: MachineInfo): ElkNode {
  const internal = internalBySource(machine.transitions)
  const edges: ElkExtendedEdge[] = []
  const node = (def: StateDef): ElkNode => {
    const children = Object.values(def.states ?? {})
    const lines = internal.get(def.id) ?? []
    const headerWidth = Math.max(textWidth(def.key), ...lines.map((t) => textWidth(`↻ ${transitionLabel(t)}`)))
    if (children.length === 0) {
      return { id: def.id, width: Math.max(90, headerWidth), height: HEAD + 6 + lines.length * LINE }
    }
    const kids = children.map(node)
    const initial = initialChildId(def)
    if (initial) {
      kids.unshift({ id: `${def.id}.__initial`, width: 10, height: 10 })
      edges.push({ id: `${def.id}|initial`, sources: [`${def.id}.__initial`], targets: [initial] })
    }
    return {
      id: def.id,
      layoutOptions: { 'elk.padding': `[top=${HEAD + 8 + lines.length * LINE},left=14,bottom=14,right=14]` },
      // ELK grows a compound box around its children; the header must still fit.
      width: headerWidth,
      children: kids,
    }
  }
  const root = node(machine.definition)
  for (const t of machine.transitions) {
    t.targets.forEach((target, i) => {
      const label = transitionLabel(t)
      edges.push({
        id: `${t.key}>${i}`,
        sources: [t.source],
        targets: [target],
        labels: [{ id: `${t.key}>${i}|label`, text: label, width: textWidth(label) - 8, height: 14 }],
      })
    })
  }
  return {
    id: '__graph',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'DOWN',
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.json.edgeCoords': 'ROOT',
      'elk.json.shapeCoords': 'ROOT',
      'elk.layered.spacing.nodeNodeBetweenLayers': '36',
      'elk.spacing.nodeNode': '28',
      'elk.spacing.edgeLabel': '4',
      'elk.edgeLabels.inline': 'false',
      'elk.nodeSize.constraints': 'MINIMUM_SIZE',
    },
    children: [root],
    edges,
  }
}

/** The laid-out graph as boxes and polylines, outermost boxes first so children paint on top. */
export function toDrawing(machine: MachineInfo, laid: ElkNode): Drawing {
  const internal = internalBySource(machine.transitions)
  const types = new Map<string, StateDef>()
  const index = (def: StateDef) => {
    types.set(def.id, def)
    for (const child of Object.values(def.states ?? {})) index(child)
  }
  index(machine.definition)
  const states: DrawnState[] = []
  const walk = (n: ElkNode, depth: number) => {
    const def = types.get(n.id)
    if (def) {
      states.push({
        id: n.id,
        key: def.key,
        type: def.type,
        x: n.x ?? 0,
        y: n.y ?? 0,
        width: n.width ?? 0,
        height: n.height ?? 0,
        compound: Object.keys(def.states ?? {}).length > 0,
        depth,
        internal: internal.get(n.id) ?? [],
      })
    }
    for (const child of n.children ?? []) walk(child, def ? depth + 1 : depth)
  }
  walk(laid, 0)
  const edges: DrawnEdge[] = []
  const collect = (n: ElkNode) => {
    for (const e of (n.edges ?? []) as ElkExtendedEdge[]) {
      const section = e.sections?.[0]
      if (!section) continue
      const label = e.labels?.[0]
      const initial = e.id.endsWith('|initial')
      edges.push({
        key: initial ? e.id : e.id.slice(0, e.id.lastIndexOf('>')),
        label: label?.text ?? '',
        points: [section.startPoint, ...(section.bendPoints ?? []), section.endPoint],
        ...(label ? { labelAt: { x: label.x ?? 0, y: label.y ?? 0, width: label.width ?? 0, height: label.height ?? 0 } } : {}),
        initial,
      })
    }
    for (const child of n.children ?? []) collect(child)
  }
  collect(laid)
  // A little slack past the right and bottom edges, so strokes and labels are never clipped.
  return { width: (laid.width ?? 0) + 4, height: (laid.height ?? 0) + 4, states, edges }
}

export async function layoutMachine(elk: Elk, machine: MachineInfo): Promise<Drawing> {
  return toDrawing(machine, await elk.layout(toElkGraph(machine)))
}

function internalBySource(transitions: TransitionInfo[]): Map<string, TransitionInfo[]> {
  const map = new Map<string, TransitionInfo[]>()
  for (const t of transitions) {
    if (t.targets.length > 0) continue
    map.set(t.source, [...(map.get(t.source) ?? []), t])
  }
  return map
}
