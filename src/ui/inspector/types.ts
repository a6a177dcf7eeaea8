/**
 * The inspector's wire types. Type-only imports: nothing from the host or server reaches the
 * bundle, but the page cannot drift from what the routes send.
 */
export type { InspectionRecord, ActorStatus, ActorNode } from '../../schemas/inspection.js'
export type { TransitionInfo } from '../../machines/diagram.js'
import type { TransitionInfo } from '../../machines/diagram.js'

/** The part of `machine.toJSON()` the drawing reads. */
export interface StateDef {
  id: string
  key: string
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history'
  initial?: { target?: string[] }
  states?: Record<string, StateDef>
}

export interface MachineInfo {
  machineId: string
  definition: StateDef
  transitions: TransitionInfo[]
}
