/**
 * Cluster mode's fence on a runtime (src/runtime/tools/ownership-fence.ts): once the node may no
 * longer act for the thread, a tool call is refused before it runs (before any permission question)
 * and nothing more is appended to the thread's session file. A runtime built without a fence (one
 * node) is what every other runtime test drives.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { sessionPaths } from '../../src/runtime/index.js'
import { answered, FakeBridge, piRuntimes, Recorder, tempDir } from './helpers.js'
import { ALLOW_ONCE } from '../../src/runtime/tools/tool-permission.js'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const call = (tool: string, args: object) => `call ${tool} ${JSON.stringify(args)}`

describe('a runtime fenced off its thread (cluster mode)', () => {
  it("a stale node refuses the next tool call, the model's or a typed !command, before it is asked or run, and appends nothing more to the session file", async () => {
    const tmp = tempDir()
    cleanups.push(tmp.cleanup)
    let stale: string | undefined
    const runtimes = await piRuntimes({ dataDir: tmp.dir })
    const ui = new FakeBridge()
    const runtime = await runtimes.create({ threadId: 't', model: 'demo', ui, fence: () => stale })
    cleanups.push(() => runtime.dispose())
    const rec = new Recorder(runtime)

    // While the node owns the thread, tools run as on one node (bash asks, by the default policy).
    runtime.prompt({ messageId: 'p1', text: call('bash', { command: 'echo one > one.txt' }) })
    ;(await ui.nthAsk(0)).resolve(answered({ value: ALLOW_ONCE }))
    await rec.next('settled')
    expect(existsSync(join(tmp.dir, 'one.txt'))).toBe(true)
    const file = sessionPaths(tmp.dir, 't').file
    const before = readFileSync(file, 'utf8')

    stale = 'node n1 no longer owns thread t'
    runtime.prompt({ messageId: 'p2', text: call('bash', { command: 'echo two > two.txt' }) })
    await rec.next('settled', 2)
    const end = rec.of('tool-end')[1]
    expect(end.isError).toBe(true)
    expect(end.result.text).toBe('bash did not run: node n1 no longer owns thread t.')
    expect(ui.asks).toHaveLength(1)
    expect(existsSync(join(tmp.dir, 'two.txt'))).toBe(false)
    expect(readFileSync(file, 'utf8')).toBe(before)

    // A command typed in the composer (`!`) is refused the same way.
    runtime.prompt({ messageId: 'p3', text: '!echo three > three.txt' })
    await rec.next('settled', 3)
    expect(rec.of('tool-end')[2].result.text).toContain('The command did not run: node n1 no longer owns thread t.')
    expect(ui.asks).toHaveLength(1)
    expect(existsSync(join(tmp.dir, 'three.txt'))).toBe(false)
    expect(readFileSync(file, 'utf8')).toBe(before)
  })
})
