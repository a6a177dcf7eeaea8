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
 */
import { randomUUID } from 'node:crypto'
import { Kvm } from '@nats-io/kv'
import { Objm, type ObjectStore } from '@nats-io/obj'
import type { NatsConnection } from '@nats-io/transport-node'
import { json, Link, parse, refused } from './nats-link.js'
import { tokenOf, type Checkpoint, type ThreadLogs } from './port.js'

const OBJECTS = 'th_checkpoints'
const POINTERS = 'th_checkpoint'
/** How long reading a checkpoint may take before the mirror reads the log from its first record instead. */
export const CHECKPOINT_READ_MS = 5000

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
}

export async function checkpointsOn(nc: NatsConnection, link: Link): Promise<NatsCheckpoints> {
  const objects = await new Objm(nc).create(OBJECTS)
  const pointers = await new Kvm(nc).create(POINTERS, { history: 1 })
  return {
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
      await link.call(() => objects.putBlob({ name: object }, encoder.encode(checkpoint.state)))
      const pointer = json({ position: checkpoint.position, object, ...(current ? { before: current.object } : {}) } satisfies Pointer)
      try {
        await link.call(() => (entry ? pointers.update(token, pointer, entry.revision) : pointers.create(token, pointer)))
      } catch (error) {
        // Another node moved the pointer since it was read (an old owner and a new one): its checkpoint stands.
        // Any other failure may have moved it all the same (its answer lost): the object stays.
        if (!refused(error)) throw error
        await link.call(() => objects.delete(object)).catch(() => {})
        return undefined
      }
      if (current?.before) await link.call(() => objects.delete(current.before!)).catch(() => {})
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
      for (const object of [pointer.object, pointer.before]) if (object !== undefined) await link.call(() => objects.delete(object)).catch(() => {})
    },
  }
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
