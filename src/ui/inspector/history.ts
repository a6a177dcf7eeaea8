/**
 * What the page remembers of the records it was sent: per actor, its last records (bounded like
 * the server's), what machine it runs and whether it is still live. Pure, so the time travel
 * ("the machine as it was right after this entry") is one function that tests can call.
 */
import type { ActorStatus } from '../../schemas/inspection.js'
import type { InspectionRecord } from './types.js'

type SnapshotRecord = Extract<InspectionRecord, { kind: 'snapshot' }>

export interface ActorMeta {
  actorId: string
  threadId: string
  machineId: string
  parentId?: string
  live: boolean
  /** How it stopped, once it has: done (final state), stopped, or error (it failed). */
  ended?: Exclude<ActorStatus, 'active'>
}

export class RecordHistory {
  readonly #records = new Map<string, InspectionRecord[]>()
  readonly #meta = new Map<string, ActorMeta>()
  #last = 0

  constructor(readonly perActor = 500) {}

  /** The highest record id seen; duplicates from a resume are ignored by it. */
  get last(): number {
    return this.#last
  }

  add(record: InspectionRecord): boolean {
    if (record.id <= this.#last) return false
    this.#last = record.id
    let list = this.#records.get(record.actorId)
    if (!list) this.#records.set(record.actorId, (list = []))
    list.push(record)
    if (list.length > this.perActor) list.shift()
    const meta = this.#meta.get(record.actorId)
    if (record.kind === 'actor.started') {
      this.#meta.set(record.actorId, {
        actorId: record.actorId,
        threadId: record.threadId,
        machineId: record.machineId,
        ...(record.parentId ? { parentId: record.parentId } : {}),
        live: true,
      })
    } else if (record.kind === 'actor.stopped' && meta) {
      meta.live = false
      if (record.status !== 'active') meta.ended = record.status
    }
    return true
  }

  records(actorId: string): InspectionRecord[] {
    return this.#records.get(actorId) ?? []
  }

  meta(actorId: string): ActorMeta | undefined {
    return this.#meta.get(actorId)
  }

  /** Actors seen in the records that are no longer live, newest first. */
  stopped(): ActorMeta[] {
    return [...this.#meta.values()].filter((m) => !m.live).reverse()
  }

  /** The actor's latest snapshot record. */
  latest(actorId: string): SnapshotRecord | undefined {
    return this.records(actorId).findLast((r): r is SnapshotRecord => r.kind === 'snapshot')
  }

  /**
   * The snapshot that shows the actor right after the given entry: the entry itself when it is a
   * snapshot, the one its event produced when it is an event or a start, the last one before a stop.
   */
  stateAfter(actorId: string, recordId: number): SnapshotRecord | undefined {
    const list = this.records(actorId)
    const at = list.findIndex((r) => r.id === recordId)
    if (at < 0) return undefined
    const entry = list[at]
    if (entry.kind === 'snapshot') return entry
    if (entry.kind === 'actor.stopped') return list.slice(0, at).findLast((r): r is SnapshotRecord => r.kind === 'snapshot')
    return list.slice(at + 1).find((r): r is SnapshotRecord => r.kind === 'snapshot')
  }
}
