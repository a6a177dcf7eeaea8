/**
 * What an extension may ask of its session besides the UI — `session_shutdown` on release, the
 * command context's actions, `ctx.shutdown()`, `ctx.mode` — as pi's RPC mode answers it, and which
 * of threadhost's own tools a model is offered.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fauxAssistantMessage, fauxProvider, getCurrentTools, type FauxResponseFactory } from '@earendil-works/pi-ai'
import type { ExtensionFactory } from '@earendil-works/pi-coding-agent'
import { sessionPaths, type ToolPolicy } from '../../src/runtime/index.js'
import type { ThreadActions } from '../../src/runtime/port.js'
import { DEFAULT_TOOL_POLICY } from '../../src/runtime/tool-policy.js'
import { answered, FakeBridge, installExamples, keptLog, piRuntimes, Recorder, tempDir, type PiTestOptions } from './helpers.js'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

interface ThreadSetup extends Omit<Partial<PiTestOptions>, 'dataDir' | 'agentDir' | 'log'> {
  examples?: string[]
  cwd?: string
  model?: string
  actions?: ThreadActions
}

async function thread(o: ThreadSetup = {}) {
  const tmp = tempDir()
  cleanups.push(tmp.cleanup)
  const agentDir = join(tmp.dir, 'agent')
  installExamples(agentDir, ...(o.examples ?? []))
  const log = keptLog()
  const { examples: _e, cwd, model, actions, ...extra } = o
  const { create } = await piRuntimes({ dataDir: tmp.dir, agentDir, log, ...extra })
  const ui = new FakeBridge()
  const runtime = await create({ threadId: 't', model: model ?? 'demo', ui, ...(cwd ? { cwd } : {}), ...(actions ? { actions } : {}) })
  cleanups.push(() => runtime.dispose())
  return { ui, runtime, rec: new Recorder(runtime), log, agentDir, dataDir: tmp.dir }
}

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim()

describe('the session an extension sees', () => {
  it("extensions hear session_shutdown when the runtime is released: auto-commit-on-exit commits the thread's work", async () => {
    const ws = tempDir()
    cleanups.push(ws.cleanup)
    git(ws.dir, 'init', '-q')
    git(ws.dir, 'config', 'user.email', 'test@example.com')
    git(ws.dir, 'config', 'user.name', 'test')
    const { runtime, rec } = await thread({ examples: ['auto-commit-on-exit.ts'], cwd: ws.dir })
    runtime.prompt({ messageId: 'p', text: 'tidy up' })
    await rec.next('settled')
    writeFileSync(join(ws.dir, 'notes.txt'), 'work in progress\n')
    await runtime.dispose()
    expect(git(ws.dir, 'log', '--format=%s')).toBe('[pi] You said: tidy up')
    expect(git(ws.dir, 'status', '--porcelain')).toBe('')
  })

  it('a session_shutdown handler that never ends does not hold the release; the log says so', async () => {
    const hangs: ExtensionFactory = (pi) => {
      pi.on('session_shutdown', () => new Promise<void>(() => {}))
    }
    const { runtime, log } = await thread({ extraExtensions: () => [hangs], shutdownMs: 50 })
    await runtime.dispose()
    expect(log.warnings).toContainEqual(expect.stringMatching(/^thread t: extensions' session_shutdown handlers took longer than 50 ms/))
  })

  it('ctx.reload() reloads the extensions: one installed after the start is there after /reload-runtime (reload-runtime)', async () => {
    const { runtime, rec, agentDir } = await thread({ examples: ['reload-runtime.ts'] })
    installExamples(agentDir, 'hello.ts')
    runtime.prompt({ messageId: 'r', text: '/reload-runtime' })
    await rec.next('settled')
    runtime.prompt({ messageId: 'p', text: 'call hello {"name":"Ada"}' })
    await rec.next('settled', 2)
    expect(rec.of('tool-end').map((e) => [e.result.text, e.isError])).toEqual([['Hello, Ada!', false]])
  })

  it('ctx.shutdown() is answered with a notice, and the thread goes on (shutdown-command /quit)', async () => {
    const { runtime, rec, ui } = await thread({ examples: ['shutdown-command.ts'] })
    runtime.prompt({ messageId: 'q', text: '/quit' })
    await rec.next('settled')
    expect(ui.notes).toEqual([{ message: expect.stringMatching(/^An extension asked pi to shut down \(ctx\.shutdown\(\)\)/), level: 'warning' }])
    runtime.prompt({ messageId: 'p', text: 'still here?' })
    await rec.next('settled', 2)
    expect(rec.text()).toContain('You said: still here?')
  })
})

/**
 * A command that calls every session action of its context that needs the host and shows what each
 * answered (`navigateTree` is the thread's own: test/server/session-tree.test.ts).
 */
const actionsProbe: ExtensionFactory = (pi) => {
  pi.registerCommand('probe', {
    description: 'session actions',
    handler: async (args, ctx) => {
      await ctx.waitForIdle()
      const answers = {
        mode: ctx.mode,
        newSession: await ctx.newSession({ parentSession: args }),
        fork: await ctx.fork(ctx.sessionManager.getLeafId()!, { position: 'at' }),
        switchSession: await ctx.switchSession(args),
      }
      ctx.ui.notify(JSON.stringify(answers), 'info')
    },
  })
}

describe("the command context's session actions", () => {
  it('without the host\'s hooks each says it cannot be done here and answers {cancelled: true}; ctx.mode is "rpc"', async () => {
    const { runtime, rec, ui } = await thread({ extraExtensions: () => [actionsProbe] })
    runtime.prompt({ messageId: 'p', text: '/probe /elsewhere/session.jsonl' })
    await rec.next('settled')
    const told = ui.notes.map((n) => n.message)
    expect(told.slice(0, 3)).toEqual([
      expect.stringMatching(/^An extension asked to start a new session \(ctx\.newSession\(\)\).*nothing changed\.$/),
      expect.stringMatching(/^An extension asked to fork the conversation \(ctx\.fork\(\)\)/),
      expect.stringMatching(/^An extension asked to switch to another session \(ctx\.switchSession\(\)\)/),
    ])
    expect(JSON.parse(told[3])).toEqual({
      mode: 'rpc',
      newSession: { cancelled: true },
      fork: { cancelled: true },
      switchSession: { cancelled: true },
    })
  })

  it("with the host's hooks each goes to the host, a thread's session named by its thread id", async () => {
    const calls: unknown[][] = []
    const done = async () => ({ cancelled: false })
    const actions: ThreadActions = {
      newThread: (r) => (calls.push(['newThread', r]), done()),
      fork: (r) => (calls.push(['fork', r]), done()),
      switchSession: (r) => (calls.push(['switchSession', r]), done()),
    }
    const { runtime, rec, ui, dataDir } = await thread({ extraExtensions: () => [actionsProbe], actions })
    const other = sessionPaths(dataDir, 'other').file
    runtime.prompt({ messageId: 'p', text: `/probe ${other}` })
    await rec.next('settled')
    expect(calls).toEqual([
      ['newThread', { parentThreadId: 'other' }],
      ['fork', { throughEntry: expect.any(String) }],
      ['switchSession', { sessionPath: other, threadId: 'other' }],
    ])
    expect(ui.notes.map((n) => JSON.parse(n.message) as Record<string, unknown>)).toEqual([
      { mode: 'rpc', newSession: { cancelled: false }, fork: { cancelled: false }, switchSession: { cancelled: false } },
    ])
  })
})

describe("threadhost's own tools", () => {
  /** The tool names a scripted model is declared, per call. */
  async function toolsOffered(policy?: ToolPolicy) {
    const faux = fauxProvider({ provider: 'scripted' })
    const offered: string[][] = []
    faux.setResponses([
      (context) => (offered.push(getCurrentTools(context.messages).map((t) => t.name)), fauxAssistantMessage('ok')),
    ])
    const { runtime, rec } = await thread({ providers: [faux.provider], model: `scripted/${faux.models[0].id}`, ...(policy ? { toolPolicy: policy } : {}) })
    runtime.prompt({ messageId: 'p', text: 'hi' })
    await rec.next('settled')
    return { offered: offered[0], runtime }
  }

  it('ui_dialog is offered to the demo model only; a real model gets ask_user_question', async () => {
    const { offered } = await toolsOffered()
    expect(offered).toContain('ask_user_question')
    expect(offered).not.toContain('ui_dialog')
  })

  it('a thread that switches to the demo model is offered ui_dialog, and loses it when it switches back', async () => {
    const faux = fauxProvider({ provider: 'scripted' })
    const offered: string[][] = []
    const answer: FauxResponseFactory = (context) => (offered.push(getCurrentTools(context.messages).map((t) => t.name)), fauxAssistantMessage('ok'))
    faux.setResponses([answer, answer])
    const model = `scripted/${faux.models[0].id}`
    const { runtime, rec, ui } = await thread({ providers: [faux.provider], model })
    await runtime.configure({ model: 'demo' })
    runtime.prompt({ messageId: 'd', text: 'call ui_dialog {"method":"confirm","title":"Go?"}' })
    ;(await ui.nthAsk(0)).resolve(answered({ confirmed: true }))
    await rec.next('settled')
    expect(rec.of('tool-end')[0].isError).toBe(false)
    await runtime.configure({ model })
    runtime.prompt({ messageId: 'p', text: 'hi' })
    await rec.next('settled', 2)
    expect(offered[0]).not.toContain('ui_dialog')
  })

  it('ask_user_question is left out altogether when the tool policy denies it', async () => {
    const { offered } = await toolsOffered({ ...DEFAULT_TOOL_POLICY, tools: { ...DEFAULT_TOOL_POLICY.tools, ask_user_question: 'deny' } })
    expect(offered).not.toContain('ask_user_question')
  })
})
