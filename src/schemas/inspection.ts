/**
 * What the machine inspector sends over the wire: inspection records and the live actor tree.
 * Plain types (the inspector is a debugging aid, so nothing validates them at run time); shared by
 * the host that records, the routes that serve and the page that draws.
 */

/** xstate's state value, restated so this layer needs nothing but itself. */
export type StateValue = string | { [region: string]: StateValue | undefined }

export type ActorStatus = 'active' | 'done' | 'stopped' | 'error'

export interface RecordBase {
  /** Numbered across the whole host: the SSE id, and the resume point. */
  id: number
  ts: number
  threadId: string
  /** The actor's path from its thread: `thread:<id>`, `thread:<id>/askQueue`, `thread:<id>/<dialogId>`. */
  actorId: string
}

export type InspectionRecord =
  | (RecordBase & { kind: 'actor.started'; machineId: string; parentId?: string; systemId?: string })
  | (RecordBase & { kind: 'actor.stopped'; status: ActorStatus })
  /** An event delivered to the actor; `origin` is the sending actor, absent when the host sent it. */
  | (RecordBase & { kind: 'event'; event: EventDigest; origin?: string })
  /** The actor's state right after it handled `event`; `transitions` are the keys (diagram.ts) it took. */
  | (RecordBase & {
      kind: 'snapshot'
      event: string
      value: StateValue | null
      status: ActorStatus
      context: unknown
      transitions: string[]
    })

export type EventDigest = { type: string; [key: string]: unknown }


/** One live actor and its children, as `GET /api/debug/actors` lists them. */
export interface ActorNode {
  actorId: string
  id: string
  threadId: string
  machineId: string
  systemId?: string
  value: StateValue | null
  status: string
  children: ActorNode[]
}
