/**
 * pi's user shell from the composer (issue 19): `!cmd` and `!!cmd` as pi's interactive mode runs
 * them — the tool policy's bash rule first, then `user_bash` for extensions (pi's
 * `interactive-shell.ts`, loaded unmodified from node_modules), then pi's own executeBash in the
 * thread's workspace; the output in the transcript, live and cold, and in (or, for `!!`, out of)
 * the model's context as pi records it.
 */
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { ALLOW_ONCE, DENY } from '../../src/runtime/index.js'
import { api, is, SseClient, startHarness, type Harness } from './harness.js'

const EXAMPLES = fileURLToPath(new URL('../../node_modules/@earendil-works/pi-coding-agent/examples/extensions/', import.meta.url))

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

let agentDir = ''

async function host(dataDir?: string): Promise<Harness> {
  if (!dataDir) {
    agentDir = await mkdtemp(join(tmpdir(), 'threadhost-shell-'))
    const made = agentDir
    cleanups.push(() => rm(made, { recursive: true, force: true }))
    await mkdir(join(agentDir, 'extensions'))
    await copyFile(join(EXAMPLES, 'interactive-shell.ts'), join(agentDir, 'extensions', 'interactive-shell.ts'))
  }
  const h = await startHarness({ agentDir, ...(dataDir ? { dataDir } : {}) })
  cleanups.push(() => h.close())
  return h
}

async function follow(h: Harness, id: string): Promise<SseClient> {
  const tab = await SseClient.open(`${h.url}/api/threads/${id}/follow`)
  cleanups.push(() => tab.close())
  return tab
}


describe('! and !! in the composer', () => {
  it("!cmd asks the bash rule, runs in the thread's workspace and shows its output; !!cmd reaches user_bash handlers and stays out of the context", async () => {
    const h = await host()
    await api(h.url, 'POST', '/api/threads', { id: 'sh' })
    const tab = await follow(h, 'sh')
    // pi writes a session file once it holds a conversation: a prompt first, so the shell's records persist.
    await api(h.url, 'POST', '/api/threads/sh/prompt', { message: 'hello' })
    await tab.waitFor(is('status', { busy: false, run: 1 }))

    expect((await api(h.url, 'POST', '/api/threads/sh/prompt', { message: '!pwd && echo from-the-shell' })).status).toBe(202)
    // The default policy asks for bash; the card says the command came from the composer.
    const asked = await tab.waitFor(is('extension-ui-request'))
    expect(asked.data.dialog.title).toContain('composer')
    expect(asked.data.dialog.title).toContain('$ pwd && echo from-the-shell')
    expect((await api(h.url, 'POST', '/api/threads/sh/dialog', { id: asked.data.id, value: ALLOW_ONCE })).status).toBe(204)
    const ran = await tab.waitFor(is('tool-end'))
    expect(ran.data).toMatchObject({ isError: false, result: { text: `${h.dataDir}\nfrom-the-shell\n` } })
    const started = tab.frames.find(is('tool-start'))!
    expect(started.data).toMatchObject({ name: 'bash', args: { command: 'pwd && echo from-the-shell', user: true } })
    await tab.waitFor(is('status', { busy: false, run: 2 }))

    // interactive-shell.ts takes `vim` itself (its user_bash handler saw the command) and asks for the
    // terminal (tui.stop()): a browser tab has none to hand over, so the command is refused, plainly.
    await api(h.url, 'POST', '/api/threads/sh/prompt', { message: '!!vim notes.txt' })
    const second = await tab.waitFor((f) => f.event === 'extension-ui-request' && f.data.id !== asked.data.id)
    await api(h.url, 'POST', '/api/threads/sh/dialog', { id: second.data.id, value: ALLOW_ONCE })
    const vim = await tab.waitFor((f) => f.event === 'tool-end' && f.data.toolCallId !== ran.data.toolCallId)
    expect(vim.data.result.text).toContain('a program that takes over the terminal (tui.stop()) cannot run here')
    await tab.waitFor(is('status', { busy: false, run: 3 }))
    // A `!!` command the extension lets through runs, out of the context.
    const seen = tab.frames.length
    await api(h.url, 'POST', '/api/threads/sh/prompt', { message: '!!echo quiet' })
    const third = await tab.waitFor((f) => f.event === 'extension-ui-request' && tab.frames.indexOf(f) >= seen)
    await api(h.url, 'POST', '/api/threads/sh/dialog', { id: third.data.id, value: ALLOW_ONCE })
    await tab.waitFor(is('status', { busy: false, run: 4 }))

    // pi recorded what ran as its CLI does: `!` into the context, `!!` excluded from it (the refused vim never ran).
    const sessionDir = join(h.dataDir, 'sessions')
    const files = (await readdir(sessionDir, { recursive: true })).filter((f) => String(f).endsWith('.jsonl'))
    const lines = (await Promise.all(files.map((f) => readFile(join(sessionDir, String(f)), 'utf8')))).join('\n').split('\n')
    const recorded = lines.filter((l) => l.includes('"bashExecution"')).map((l) => JSON.parse(l).message)
    expect(recorded).toEqual([
      expect.objectContaining({ command: 'pwd && echo from-the-shell', excludeFromContext: false }),
      expect.objectContaining({ command: 'echo quiet', excludeFromContext: true }),
    ])

    // Cold, the transcript folds the same entries from pi's session.
    tab.close()
    await h.close({ keepData: true })
    const again = await host(h.dataDir)
    cleanups.push(() => rm(h.dataDir, { recursive: true, force: true }))
    const cold = await follow(again, 'sh')
    const entries = (await cold.waitFor(is('snapshot'))).data.transcript
    expect(entries.filter((e: { kind: string }) => e.kind === 'tool')).toEqual([
      expect.objectContaining({ name: 'bash', state: 'done', args: { command: 'pwd && echo from-the-shell', user: true } }),
      expect.objectContaining({ name: 'bash', state: 'done', args: { command: 'echo quiet', user: true, excludeFromContext: true } }),
    ])
  })

  it('a denied !cmd does not run and says why', async () => {
    const h = await host()
    await api(h.url, 'POST', '/api/threads', { id: 'no' })
    const tab = await follow(h, 'no')
    await api(h.url, 'POST', '/api/threads/no/prompt', { message: '!touch should-not-exist' })
    const asked = await tab.waitFor(is('extension-ui-request'))
    await api(h.url, 'POST', '/api/threads/no/dialog', { id: asked.data.id, value: DENY })
    const end = await tab.waitFor(is('tool-end'))
    expect(end.data).toMatchObject({ isError: true, result: { text: expect.stringContaining('The user denied this command') } })
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    await expect(readFile(join(h.dataDir, 'should-not-exist'))).rejects.toThrow()
  })
})
