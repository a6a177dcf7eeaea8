import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { TRUST_ALWAYS, TRUST_NEVER, TRUST_ONCE } from '../../src/runtime/project-trust.js'
import { answered, piRuntimes, Recorder, tempDir, FakeBridge, type PiTestOptions } from './helpers.js'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** A workspace with a project extension (which pi loads only once the project is trusted) and an AGENTS.md. */
function project(root: string): string {
  const cwd = join(root, 'project')
  mkdirSync(join(cwd, '.pi', 'extensions'), { recursive: true })
  writeFileSync(
    join(cwd, '.pi', 'extensions', 'project-tool.ts'),
    `export default function (pi) {
  pi.registerTool({
    name: 'project_tool',
    label: 'Project tool',
    description: 'A tool only this project has.',
    parameters: { type: 'object', properties: {} },
    async execute() {
      return { content: [{ type: 'text', text: 'the project tool ran' }], details: {} }
    },
  })
}
`,
  )
  writeFileSync(join(cwd, 'AGENTS.md'), 'Project rules.\n')
  return cwd
}

async function setup(extra: Omit<Partial<PiTestOptions>, 'dataDir'> = {}) {
  const tmp = tempDir()
  cleanups.push(tmp.cleanup)
  const cwd = project(tmp.dir)
  const agentDir = join(tmp.dir, 'agent')
  const factory = await piRuntimes({ dataDir: tmp.dir, agentDir, ...extra })
  const ui = new FakeBridge()
  const runtime = await factory.create({ threadId: 't', model: 'demo', ui, cwd })
  cleanups.push(() => runtime.dispose())
  return { runtime, ui, rec: new Recorder(runtime), cwd, agentDir }
}

const CALL = 'call project_tool {}'

describe('project trust', () => {
  it('an untrusted project is asked about in the thread before the first run; "Trust this time" loads its extension', async () => {
    const { runtime, ui, rec, cwd } = await setup()
    runtime.prompt({ messageId: 'p', text: CALL })
    const ask = await ui.nthAsk(0)
    expect(ask.request.spec).toMatchObject({ method: 'select', options: [TRUST_ONCE, TRUST_ALWAYS, TRUST_NEVER] })
    expect(ask.request.spec.title).toContain(cwd)
    // Nothing reached the model while the question was open.
    expect(rec.of('user-message')).toEqual([])
    ask.resolve(answered({ value: TRUST_ONCE }))
    await rec.next('settled')
    expect(rec.of('tool-end')[0]).toMatchObject({ isError: false, result: { text: 'the project tool ran' } })
  })

  it('"Don\'t trust" leaves the project extension unloaded and is remembered in pi\'s trust store', async () => {
    const { runtime, ui, rec, agentDir } = await setup()
    runtime.prompt({ messageId: 'p', text: CALL })
    ;(await ui.nthAsk(0)).resolve(answered({ value: TRUST_NEVER }))
    await rec.next('settled')
    expect(rec.of('tool-end')[0].isError).toBe(true)
    expect(readFileSync(join(agentDir, 'trust.json'), 'utf8')).toMatch(/false/)
    // Asked once per runtime: the next run goes straight to the model.
    runtime.prompt({ messageId: 'p2', text: 'hello' })
    await rec.next('settled', 2)
    expect(ui.asks).toHaveLength(1)
  })

  it('Stop during the trust question ends the run stopped, without running the prompt', async () => {
    const { runtime, ui, rec } = await setup()
    runtime.prompt({ messageId: 'p', text: CALL })
    await ui.nthAsk(0)
    const stopping = runtime.abort()
    ui.settleAllAborted()
    await stopping
    expect(await rec.next('settled')).toMatchObject({ aborted: true })
    expect(rec.of('user-message')).toEqual([])
  })

  it("a global extension's project_trust handler decides before the saved decision, without a question, and can ask pi to remember", async () => {
    const tmp = tempDir()
    cleanups.push(tmp.cleanup)
    const cwd = project(tmp.dir)
    const agentDir = join(tmp.dir, 'agent')
    mkdirSync(join(agentDir, 'extensions'), { recursive: true })
    writeFileSync(join(agentDir, 'trust.json'), JSON.stringify({ [cwd]: false }))
    writeFileSync(
      join(agentDir, 'extensions', 'trust-my-code.ts'),
      `export default function (pi) {
  pi.on('project_trust', (event) => ({ trusted: event.cwd.endsWith('project') ? 'yes' : 'undecided', remember: true }))
}
`,
    )
    const factory = await piRuntimes({ dataDir: tmp.dir, agentDir })
    const ui = new FakeBridge()
    const runtime = await factory.create({ threadId: 't', model: 'demo', ui, cwd })
    cleanups.push(() => runtime.dispose())
    const rec = new Recorder(runtime)
    runtime.prompt({ messageId: 'p', text: CALL })
    await rec.next('settled')
    expect(ui.asks).toHaveLength(0)
    expect(rec.of('tool-end')[0]).toMatchObject({ isError: false, result: { text: 'the project tool ran' } })
    expect(readFileSync(join(agentDir, 'trust.json'), 'utf8')).toMatch(/true/)
  })

  it('--trust-projects yes loads project resources without asking; no never loads them', async () => {
    const trusted = await setup({ trustProjects: 'yes' })
    trusted.runtime.prompt({ messageId: 'p', text: CALL })
    await trusted.rec.next('settled')
    expect(trusted.ui.asks).toHaveLength(0)
    expect(trusted.rec.of('tool-end')[0].isError).toBe(false)

    const refused = await setup({ trustProjects: 'no' })
    refused.runtime.prompt({ messageId: 'p', text: CALL })
    await refused.rec.next('settled')
    expect(refused.ui.asks).toHaveLength(0)
    expect(refused.rec.of('tool-end')[0].isError).toBe(true)
  })
})
