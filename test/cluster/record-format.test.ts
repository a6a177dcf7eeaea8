/**
 * A node does not join a cluster whose live nodes write another record format (RECORD_FORMAT,
 * docs/flows/cluster.md): the process exits 2 with a line that names the other node and both formats,
 * as for a wrong flag. On a real `nats-server -js`; skipped, saying why, where it is not installed.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { RECORD_FORMAT } from '../../src/host/cluster/port.js'
import { natsMissing, startNats, type NatsServer } from '../support/nats-server.js'
import { spawnedServers } from '../support/spawn-server.js'

describe.skipIf(natsMissing !== undefined)(`a node started beside one of another record format${natsMissing ? ` (${natsMissing})` : ''}`, () => {
  const { startProcess, tempDataDir } = spawnedServers('record-format')
  let nats: NatsServer | undefined
  afterEach(async () => {
    await nats?.stop()
    nats = undefined
  })

  it('exits 2 saying which node writes which format, and leaves no lease behind', async () => {
    nats = await startNats()
    const [{ connect }, { Kvm }] = await Promise.all([import('@nats-io/transport-node'), import('@nats-io/kv')])
    const nc = await connect({ servers: nats.url })
    // A node of the next version, as it holds its lease: renewed well inside the 3 s it lasts.
    const leases = await new Kvm(nc).create('th_nodes', { ttl: 3000, history: 1 })
    const renew = () => leases.put('next-0001', JSON.stringify({ name: 'next', format: RECORD_FORMAT + 1 }))
    await renew()
    const renewing = setInterval(() => void renew(), 500)
    try {
      const dataDir = await tempDataDir()
      const server = startProcess(['--port', '0', '--data-dir', dataDir, '--workspace', dataDir, '--model', 'demo', '--cluster', nats.url, '--node-name', 'n1'])
      // Listening would mean it joined.
      expect(await Promise.race([server.exit, server.url.then(() => 'listening')])).toBe(2)
      expect(server.output()).toContain(`--cluster ${nats.url}: node next writes the cluster's records in format ${RECORD_FORMAT + 1} and this threadhost in format ${RECORD_FORMAT}`)
      const names: string[] = []
      for await (const id of await leases.keys()) {
        const entry = await leases.get(id)
        if (entry?.operation === 'PUT') names.push(entry.json<{ name: string }>().name)
      }
      expect(names).toEqual(['next'])
    } finally {
      clearInterval(renewing)
      await nc.close()
    }
  })

  it('a node away past its lease while a node of another format joined stops as it comes back, and exits 2', async () => {
    nats = await startNats()
    const dataDir = await tempDataDir()
    const server = startProcess(['--port', '0', '--data-dir', dataDir, '--workspace', dataDir, '--model', 'demo', '--cluster', nats.url, '--node-name', 'n1'])
    await server.url
    const [{ connect }, { Kvm }] = await Promise.all([import('@nats-io/transport-node'), import('@nats-io/kv')])
    const nc = await connect({ servers: nats.url })
    const leases = await new Kvm(nc).open('th_nodes')
    const renew = () => leases.put('next-0001', JSON.stringify({ name: 'next', format: RECORD_FORMAT + 1 }))
    let renewing: ReturnType<typeof setInterval> | undefined
    try {
      // Frozen past its 3 s lease; the next version joins meanwhile.
      process.kill(server.child.pid!, 'SIGSTOP')
      await new Promise((resolve) => setTimeout(resolve, 3500))
      await renew()
      renewing = setInterval(() => void renew(), 500)
      process.kill(server.child.pid!, 'SIGCONT')
      expect(await server.exit).toBe(2)
      expect(server.output()).toContain(`node next writes the cluster's records in format ${RECORD_FORMAT + 1} and this threadhost in format ${RECORD_FORMAT}`)
    } finally {
      clearInterval(renewing)
      await nc.close()
    }
  })
})
