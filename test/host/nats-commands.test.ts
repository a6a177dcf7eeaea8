/**
 * The command bus on a real `nats-server -js` (src/host/cluster/nats-commands.ts): a request too large
 * for one message travels as a file of the spill dir, and a message is read as naming such a file only
 * when the name is one a sender makes — anyone who can publish on `cmd.*` cannot make the owner read
 * another file. Skipped, saying why, where nats-server is not installed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ClusterEngine, CommandRequest } from '../../src/host/cluster/port.js'
import { tokenOf } from '../../src/host/cluster/port.js'
import { natsMissing, startNats, type NatsServer } from '../support/nats-server.js'

describe.skipIf(natsMissing !== undefined)(`the command bus on NATS${natsMissing ? ` (${natsMissing})` : ''}`, () => {
  let server: NatsServer
  let owner: ClusterEngine
  let dir: string
  beforeAll(async () => {
    server = await startNats()
    dir = mkdtempSync(join(tmpdir(), 'threadhost-spill-'))
    const { connectNats } = await import('../../src/host/cluster/nats.js')
    owner = await connectNats({ servers: [server.url] }, 'owner', undefined, { spillDir: join(dir, 'spill') })
  })
  afterAll(async () => {
    await owner?.close().catch(() => {})
    await server?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('a message naming any file but a spilled body is refused, and its handler never runs', async () => {
    const secret = join(dir, 'secret.txt')
    writeFileSync(secret, 'not for the bus')
    const seen: CommandRequest[] = []
    const stop = await owner.commands.serve('t1', async (request) => (seen.push(request), { status: 200, headers: {}, body: '' }))
    const { connect } = await import('@nats-io/transport-node')
    const nc = await connect({ servers: server.url })
    try {
      for (const spilled of ['../secret.txt', secret, '/dev/zero', 'x.body']) {
        const reply = await nc.request(`cmd.${tokenOf('t1')}`, JSON.stringify({ method: 'POST', url: '/api/threads/t1/prompt', headers: {}, spilled }), { timeout: 2000 })
        const answer = JSON.parse(reply.string()) as { status: number; body: string }
        expect(answer.status).toBe(503)
        expect(answer.body).not.toContain('not for the bus')
      }
    } finally {
      await nc.close()
      stop()
    }
    expect(seen).toEqual([])
  })
})
