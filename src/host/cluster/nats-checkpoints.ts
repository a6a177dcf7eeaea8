/**
 * The checkpoints of the thread logs (port.ts `ThreadLogs.checkpoint`) on NATS JetStream. A checkpoint
 * outgrows one message on a long thread (1 MB by default), so each is an object of the `th_checkpoints`
 * object store, which chunks it and checks its digest; the `th_checkpoint` key-value bucket names each
 * thread's newest.
 *
 * An object is never written over: a read that overlaps a new write of the same object never ends
 * (its chunks are purged under it). Each checkpoint is a new object, the pointer moves to it by
 * compare-and-set, and the object the pointer named two checkpoints ago is deleted — a reader still on
 * it after a whole checkpoint's worth of records is stopped by its timeout, and finds the log trimmed
 * below the newest's predecessor (nats-logs.ts): it starts again from the newest.
 *
 * An object no pointer names is left behind by a node that died between writing it and moving the
 * pointer, or before it deleted the object replaced (or whose delete failed): each node sweeps such
 * objects from time to time. One at or below its thread's newest checkpoint goes at once (the pointer
 * never goes back to it); any other may be a checkpoint being kept, and goes only if a sweep a whole
 * interval earlier found it unnamed too — a keep that took that long between its object and its
 * pointer gives up instead (KEEP_WITHIN_MS). No clock of another node is trusted.
 */
import { randomUUID } from 'node:crypto'
import { Kvm } from '@nats-io/kv'
import { Objm, type ObjectStore } from '@nats-io/obj'
import type { NatsConnection } from '@nats-io/transport-node'
import type { Log } from '../store/journal.js'
import { json, Link, parse, refused } from './nats-link.js'
import { EngineAway, tokenOf, type Checkpoint, type ThreadLogs } from './port.js'

const OBJECTS = 'th_checkpoints'
const POINTERS = 'th_checkpoint'
/** How long reading a checkpoint may take before the mirror reads the log from its first record instead. */
export const CHECKPOINT_READ_MS = 5000
/** Each node sweeps a random while after it connects (up to this), so that nodes started together do not sweep at once… */
const FIRST_SWEEP_MS = 10 * 60_000
/** …and then this often. */
const SWEEP_EVERY_MS = 6 * 60 * 60_000
/** A checkpoint whose object was written longer ago than this is not kept: a sweep may have found its object unnamed. */
const KEEP_WITHIN_MS = 60 * 60_000

/** What `th_checkpoint` holds for a thread: its newest checkpoint's object, and the one before. */
interface Pointer {
  position: number
  object: string
  before?: string
}

const utf8 = new TextDecoder()
const encoder = new TextEncoder()

export interface NatsCheckpoints extends Pick<ThreadLogs, 'checkpoint'> {
  /** Keeps it as the newest, unless one at or past it is: resolves the position the log may be trimmed up to, undefined when none (port.ts `keepCheckpoint`). */
  keepCheckpoint(threadId: string, checkpoint: Checkpoint): Promise<number | undefined>
  /** A deleted thread's checkpoint (one of a position before `before`) goes with its objects; a newer one stays. */
  forget(threadId: string, before: number): Promise<void>
  /**
   * Deletes the objects no thread's pointer names: at once those at or below their thread's newest
   * checkpoint, the others once this node's previous sweep found them unnamed too. Resolves how many
   * went, and how many could not be deleted (tried again at the next sweep). Rejects when a pointer
   * cannot be read: nothing is deleted on a guess.
   */
  sweep(): Promise<{ swept: number; failed: number }>
}

export async function checkpointsOn(nc: NatsConnection, link: Link, log?: Log): Promise<NatsCheckpoints> {
  const objects = await new Objm(nc).create(OBJECTS)
  const pointers = await new Kvm(nc).create(POINTERS, { history: 1 })
  /** Deletes an object if the engine lets it: one left over is the sweep's. */
  const drop = (name: string) => link.call(() => objects.delete(name)).catch(() => {})
  /** The objects above their pointer (or with none) the last sweep found unnamed. */
  let suspects = new Set<string>()
  const checkpoints: NatsCheckpoints = {
    async checkpoint(threadId) {
      const entry = await link.call(() => pointers.get(tokenOf(threadId)))
      if (entry?.operation !== 'PUT') return undefined
      const { position, object } = parse<Pointer>(entry.value)
      const bytes = await read(objects, object, link)
      return bytes === null ? undefined : { position, state: utf8.decode(bytes) }
    },
    async keepCheckpoint(threadId, checkpoint: Checkpoint) {
      const token = tokenOf(threadId)
      const entry = await link.call(() => pointers.get(token))
      const current = entry?.operation === 'PUT' ? parse<Pointer>(entry.value) : undefined
      // One at or past its position stands (a stale owner's, or the same one twice): the pointer never
      // goes back, so the log is never trimmed past the checkpoint it names.
      if (current !== undefined && current.position >= checkpoint.position) return undefined
      const object = `${token}.${checkpoint.position}.${randomUUID().slice(0, 8)}`
      const writing = performance.now()
      await link.call(() => objects.putBlob({ name: object }, encoder.encode(checkpoint.state)))
      // Paused or starved that long, the object may have been taken for one left behind: the next checkpoint is kept instead.
      if (performance.now() - writing > KEEP_WITHIN_MS) {
        await drop(object)
        return undefined
      }
      const pointer = json({ position: checkpoint.position, object, ...(current ? { before: current.object } : {}) } satisfies Pointer)
      try {
        await link.call(() => (entry ? pointers.update(token, pointer, entry.revision) : pointers.create(token, pointer)))
      } catch (error) {
        // Another node moved the pointer since it was read (an old owner and a new one): its checkpoint stands.
        // Any other failure may have moved it all the same (its answer lost): the object stays.
        if (!refused(error)) throw error
        await drop(object)
        return undefined
      }
      if (current?.before) await drop(current.before)
      // The pointer names this one and the one it replaced (below it): a reader on either reads on from its position.
      return current?.position
    },
    async forget(threadId, before) {
      const token = tokenOf(threadId)
      const entry = await link.call(() => pointers.get(token))
      if (entry?.operation !== 'PUT') return
      const pointer = parse<Pointer>(entry.value)
      if (pointer.position >= before) return
      try {
        await link.call(() => pointers.delete(token, { previousSeq: entry.revision }))
      } catch (error) {
        // A thread made again under the id kept one meanwhile: its objects are not the deleted thread's.
        if (refused(error)) return
        throw error
      }
      for (const object of [pointer.object, pointer.before]) if (object !== undefined) await drop(object)
    },
    async sweep() {
      const pointed = new Map<string, Pointer | null | 'unreadable'>()
      const unnamed = new Set<string>()
      let swept = 0
      let failed = 0
      for (const info of await link.call(() => objects.list())) {
        if (info.deleted) continue
        // Each thread's pointer is read after the listing: an object it names by then stays.
        const [token, position] = info.name.split('.')
        let pointer = pointed.get(token)
        if (pointer === undefined) {
          const entry = await link.call(() => pointers.get(token))
          try {
            pointer = entry?.operation === 'PUT' ? parse<Pointer>(entry.value) : null
          } catch {
            pointer = 'unreadable'
          }
          pointed.set(token, pointer)
        }
        if (pointer === 'unreadable' || pointer?.object === info.name || pointer?.before === info.name) continue
        const below = pointer !== null && Number(position) <= pointer.position
        if (!below && !suspects.has(info.name)) {
          unnamed.add(info.name)
          continue
        }
        try {
          await link.call(() => objects.delete(info.name))
          swept++
        } catch (error) {
          if (error instanceof EngineAway) throw error
          unnamed.add(info.name)
          failed++
        }
      }
      suspects = unnamed
      return { swept, failed }
    },
  }
  const sweep = () => {
    if (link.closed) return
    checkpoints
      .sweep()
      .then(({ swept, failed }) => {
        if (swept > 0) log?.('info', `cluster: swept ${swept} log checkpoint object(s) no thread names`)
        if (failed > 0) log?.('warn', `cluster: ${failed} log checkpoint object(s) no thread names could not be deleted; the next sweep tries again`)
      })
      .catch((error: unknown) => !(error instanceof EngineAway) && log?.('warn', `cluster: sweeping the log checkpoints failed (${String(error)}); the next sweep tries again`))
      .finally(() => setTimeout(sweep, SWEEP_EVERY_MS).unref())
  }
  setTimeout(sweep, Math.random() * FIRST_SWEEP_MS).unref()
  return checkpoints
}

/** The object's bytes; null once it is gone. Rejects after CHECKPOINT_READ_MS, the read stopped. */
async function read(objects: ObjectStore, name: string, link: Link): Promise<Uint8Array | null> {
  const result = await link.call(() => objects.get(name))
  if (result === null) return null
  // Rejects when the object store's consumer fails (a digest that does not match errors the stream
  // itself); handled here at once, so that a failure while the stream is read is never unhandled.
  const failed = result.error.catch((error: unknown) => error as Error)
  const reader = result.data.getReader()
  let late = false
  const timer = setTimeout(() => {
    late = true
    void reader.cancel()
  }, CHECKPOINT_READ_MS)
  const chunks: Uint8Array[] = []
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
    }
  } finally {
    clearTimeout(timer)
  }
  if (late) throw new Error(`the checkpoint ${name} was not read within ${CHECKPOINT_READ_MS} ms`)
  const error = await failed
  if (error) throw error
  return Buffer.concat(chunks)
}
