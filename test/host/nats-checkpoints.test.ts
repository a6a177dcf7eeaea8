/**
 * The log checkpoints on a real `nats-server -js` (src/host/cluster/nats-checkpoints.ts): the objects a
 * node leaves behind when it dies between writing a checkpoint and moving the pointer to it, or before
 * deleting the one replaced, are swept, and nothing a pointer names is. Skipped, saying why, where
 * nats-server is not installed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { NatsConnection } from '@nats-io/transport-node'
import { tokenOf } from '../../src/host/cluster/port.js'
import type { NatsCheckpoints } from '../../src/host/cluster/nats-checkpoints.js'
import { natsMissing, startNats, type NatsServer } from '../support/nats-server.js'

describe.skipIf(natsMissing !== undefined)(`log checkpoints on NATS${natsMissing ? ` (${natsMissing})` : ''}`, () => {
  let server: NatsServer
  let nc: NatsConnection
  let checkpoints: NatsCheckpoints
  beforeAll(async () => {
    server = await startNats()
    const { connect } = await import('@nats-io/transport-node')
    const { Link } = await import('../../src/host/cluster/nats-link.js')
    const { checkpointsOn } = await import('../../src/host/cluster/nats-checkpoints.js')
    nc = await connect({ servers: server.url })
    checkpoints = await checkpointsOn(nc, new Link(nc))
  })
  afterAll(async () => {
    await nc?.close().catch(() => {})
    await server?.stop()
  })

  /** The names of the objects the store holds. */
  async function objectNames(): Promise<string[]> {
    const { Objm } = await import('@nats-io/obj')
    const store = await new Objm(nc).open('th_checkpoints')
    return (await store.list()).filter((info) => !info.deleted).map((info) => info.name).sort()
  }

  /** An object written as a dying node leaves it: no pointer ever names it. */
  async function leftBehind(threadId: string, position: number): Promise<string> {
    const { Objm } = await import('@nats-io/obj')
    const store = await new Objm(nc).open('th_checkpoints')
    const name = `${tokenOf(threadId)}.${position}.deadbeef`
    await store.putBlob({ name }, new TextEncoder().encode('{"left":"behind"}'))
    return name
  }

  /** Points the thread at an object as a keep does: a checkpoint kept slowly, its object written before the sweep. */
  async function pointAt(threadId: string, pointer: { position: number; object: string; before?: string }): Promise<void> {
    const { Kvm } = await import('@nats-io/kv')
    const kv = await new Kvm(nc).open('th_checkpoint')
    await kv.put(tokenOf(threadId), JSON.stringify(pointer))
  }

  it('sweeps the objects no pointer names: below the newest checkpoint at once, above it (or with none) once a sweep before found them unnamed too', async () => {
    for (const position of [10, 20, 30]) await checkpoints.keepCheckpoint('t1', { position, state: `state at ${position}` })
    const [at20, at30] = await objectNames()
    const below = await leftBehind('t1', 25)
    const above = await leftBehind('t1', 40)
    const noPointer = await leftBehind('t-deleted', 5)

    // The one below the newest checkpoint can never be named again; the others may be checkpoints being kept.
    expect(await checkpoints.sweep()).toEqual({ swept: 1, failed: 0 })
    expect(await objectNames()).toEqual([at20, at30, above, noPointer].sort())
    expect(await checkpoints.checkpoint('t1')).toEqual({ position: 30, state: 'state at 30' })

    // The one above is named before the next sweep, as a slow keep would: it stays, and the pointer's old `before` is below it now.
    await pointAt('t1', { position: 40, object: above, before: at30 })
    const late = await leftBehind('t1', 45)
    expect(await checkpoints.sweep()).toEqual({ swept: 2, failed: 0 })
    expect(await objectNames()).toEqual([at30, above, late].sort())
    expect(await checkpoints.checkpoint('t1')).toEqual({ position: 40, state: '{"left":"behind"}' })

    // Unnamed at two sweeps in a row.
    expect(await checkpoints.sweep()).toEqual({ swept: 1, failed: 0 })
    expect(await objectNames()).toEqual([at30, above].sort())

    // The next checkpoint replaces the newest and trims up to the one it replaced, as ever.
    expect(await checkpoints.keepCheckpoint('t1', { position: 50, state: 'state at 50' })).toBe(40)
    expect(await checkpoints.checkpoint('t1')).toEqual({ position: 50, state: 'state at 50' })
  })
})
