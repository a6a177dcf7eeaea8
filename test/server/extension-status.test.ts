/**
 * `GET /api/extensions` and the counts on `GET /api/health`: what a user's extensions came to —
 * loaded, failed to load, failed in `session_start`, clashing on a tool name — without the server's
 * log (issue 19). pi's `hello.ts` is loaded unmodified from node_modules; the broken files are the
 * test's own.
 */
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { api, startHarness, type Harness } from './harness.js'

const EXAMPLES = fileURLToPath(new URL('../../node_modules/@earendil-works/pi-coding-agent/examples/extensions/', import.meta.url))

let h: Harness | undefined
let agentDir: string | undefined

afterEach(async () => {
  await h?.close()
  if (agentDir) await rm(agentDir, { recursive: true, force: true })
  h = agentDir = undefined
})

const BROKEN = `import { missing } from './no-such-module.js'\nexport default function (pi) { missing(pi) }\n`
const CLASHING = `export default function (pi) {
  pi.registerTool({ name: 'hello', label: 'Hello again', description: 'a second hello', parameters: { type: 'object', properties: {} },
    async execute() { return { content: [{ type: 'text', text: 'again' }], details: {} } } })
}\n`
const START_FAILS = `export default function (pi) {
  pi.on('session_start', () => { throw new Error('no config file at ~/.greeter') })
}\n`

describe('GET /api/extensions', () => {
  it("lists the agent dir's extensions that loaded, the ones that failed and why, and tool-name clashes; health counts them", async () => {
    agentDir = await mkdtemp(join(tmpdir(), 'threadhost-ext-status-'))
    const dir = join(agentDir, 'extensions')
    await mkdir(dir)
    await copyFile(join(EXAMPLES, 'hello.ts'), join(dir, 'hello.ts'))
    await writeFile(join(dir, 'broken.ts'), BROKEN)
    await writeFile(join(dir, 'zz-clash.ts'), CLASHING)
    await writeFile(join(dir, 'start-fails.ts'), START_FAILS)
    h = await startHarness({ agentDir })

    // Nothing is loaded before a thread's session is built.
    expect((await api(h.url, 'GET', '/api/extensions')).body).toEqual({ loaded: [], failed: [], clashes: [] })

    await api(h.url, 'POST', '/api/threads', { id: 'ext' })
    expect((await api(h.url, 'GET', '/api/threads/ext/commands')).status).toBe(200) // builds the session

    const listed = await api(h.url, 'GET', '/api/extensions')
    expect(listed.status).toBe(200)
    const { loaded, failed, clashes } = listed.body
    expect(loaded).toContainEqual(expect.objectContaining({ name: 'hello.ts', path: join(dir, 'hello.ts'), scope: 'user', tools: ['hello'] }))
    expect(loaded.map((e: { name: string }) => e.name)).not.toContain('broken.ts')
    expect(failed).toContainEqual(
      expect.objectContaining({ path: join(dir, 'broken.ts'), scope: 'user', error: expect.stringContaining('no-such-module') }),
    )
    expect(failed.find((f: { path: string }) => f.path.endsWith('broken.ts')).event).toBeUndefined()
    expect(failed).toContainEqual(
      expect.objectContaining({
        path: join(dir, 'start-fails.ts'),
        event: 'session_start',
        error: expect.stringContaining('no config file at ~/.greeter'),
        threadId: 'ext',
      }),
    )
    expect(clashes).toEqual([
      expect.objectContaining({ path: join(dir, 'zz-clash.ts'), scope: 'user', message: expect.stringContaining('Tool "hello" conflicts with') }),
    ])

    expect((await api(h.url, 'GET', '/api/health')).body).toEqual({
      status: 'ok',
      extensions: { loaded: loaded.length, failed: 2, clashes: 1 },
    })
  })
})
