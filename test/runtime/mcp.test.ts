import { mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { FakeBridge, piRuntimes, Recorder, tempDir } from './helpers.js'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const SERVER = resolve(import.meta.dirname, '../fixtures/mcp/echo-server.mjs')

describe('MCP from the user\'s mcp.json', () => {
  it('a stdio MCP server in the agent dir\'s mcp.json is started by pi, and its tool runs in a thread', async () => {
    const tmp = tempDir()
    cleanups.push(tmp.cleanup)
    const agentDir = join(tmp.dir, 'agent')
    mkdirSync(agentDir, { recursive: true })
    writeFileSync(
      join(agentDir, 'mcp.json'),
      JSON.stringify({ mcpServers: { fixture: { command: process.execPath, args: [SERVER], exposure: 'direct' } } }),
    )
    const factory = await piRuntimes({ dataDir: tmp.dir, agentDir })
    const runtime = await factory.create({ threadId: 'm', model: 'demo', ui: new FakeBridge() })
    cleanups.push(() => runtime.dispose())
    const rec = new Recorder(runtime)
    runtime.prompt({ messageId: 'p', text: 'call mcp__fixture__echo {"text":"hello over stdio"}' })
    await rec.next('settled', 1, 15_000)
    expect(rec.of('tool-start')[0]).toMatchObject({ name: 'mcp__fixture__echo' })
    expect(rec.of('tool-end')[0]).toMatchObject({ isError: false, result: { text: 'echo: hello over stdio' } })
  })
})
