/**
 * The log checkpoints on a real `nats-server -js` (src/host/cluster/nats-checkpoints.ts): the objects a
 * node leaves behind when it dies between writing a checkpoint and moving the pointer to it, or before
 * deleting the one replaced, are swept once old enough, and nothing a pointer names is. Skipped, saying
 * why, where nats-server is not installed.
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

  it('sweeps the objects no pointer names once old enough, and keeps the newest checkpoint and the one before it', async () => {
    for (const position of [10, 20, 30]) await checkpoints.keepCheckpoint('t1', { position, state: `state at ${position}` })
    const named = await objectNames()
    expect(named).toHaveLength(2)
    const orphans = [await leftBehind('t1', 40), await leftBehind('t-deleted', 5)]

    // Written a moment ago: a checkpoint being kept may not have moved its pointer yet.
    expect(await checkpoints.sweep()).toBe(0)
    expect(await objectNames()).toEqual([...named, ...orphans].sort())

    expect(await checkpoints.sweep(0)).toBe(2)
    expect(await objectNames()).toEqual(named)
    expect(await checkpoints.checkpoint('t1')).toEqual({ position: 30, state: 'state at 30' })

    // The checkpoint after the sweep replaces the newest and trims up to the one it replaced, as ever.
    expect(await checkpoints.keepCheckpoint('t1', { position: 50, state: 'state at 50' })).toBe(30)
    expect(await checkpoints.checkpoint('t1')).toEqual({ position: 50, state: 'state at 50' })
  })
})
