/**
 * The inspector's wire types. Type-only imports: nothing from the host or server reaches the
 * bundle, but the page cannot drift from what the routes send.
 */
export type { InspectionRecord, ActorStatus, ActorNode } from '../../schemas/inspection.js'
export type { TransitionInfo } from '../../machines/diagram.js'
export type { StateDef } from '../../shared/xstate-internals.js'
import type { TransitionInfo } from '../../machines/diagram.js'
import type { StateDef } from '../../shared/xstate-internals.js'

export interface MachineInfo {
  machineId: string
  definition: StateDef
  transitions: TransitionInfo[]
}
