import { afterEach, describe, expect, it } from 'vitest'
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  ALLOW_FOR_THREAD,
  DENY,
  loadToolPolicy,
  parseToolPolicy,
  PERMISSION_CHOICES,
  ruleFor,
  sessionPaths,
  TOOL_PERMISSION_ENTRY,
  ToolPolicyError,
  type ToolPolicy,
} from '../../src/runtime/index.js'
import { contains, toolPath } from '../../src/runtime/paths.js'
import { ConfigError, parseConfig } from '../../src/server/config.js'
import { answered, FakeBridge, piRuntimes, Recorder, tempDir } from './helpers.js'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** A workspace and a sibling directory outside it, both under one temp dir. */
async function setup(toolPolicy?: ToolPolicy) {
  const tmp = tempDir()
  cleanups.push(tmp.cleanup)
  const workspace = join(tmp.dir, 'workspace')
  const outside = join(tmp.dir, 'outside')
  mkdirSync(workspace)
  mkdirSync(outside)
  const runtimes = await piRuntimes({ dataDir: tmp.dir, ...(toolPolicy ? { toolPolicy } : {}) })
  const open = async (threadId = 't') => {
    const ui = new FakeBridge()
    const runtime = await runtimes.create({ threadId, model: 'demo', ui, cwd: workspace })
    cleanups.push(() => runtime.dispose())
    return { ui, runtime, rec: new Recorder(runtime) }
  }
  return { ...(await open()), open, workspace, outside, dataDir: tmp.dir }
}

const call = (tool: string, args: object) => `call ${tool} ${JSON.stringify(args)}`

function permissionEntries(dataDir: string, threadId = 't'): unknown[] {
  return readFileSync(sessionPaths(dataDir, threadId).file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { type: string; customType?: string; data?: unknown })
    .filter((e) => e.type === 'custom' && e.customType === TOOL_PERMISSION_ENTRY)
    .map((e) => e.data)
}

describe('tool permissions: one policy on every tool call', () => {
  it('writing a file outside the workspace asks first, naming the path; Deny leaves the file system unchanged', async () => {
    const { runtime, rec, ui, outside, dataDir } = await setup()
    const target = join(outside, 'out.txt')
    runtime.prompt({ messageId: 'p', text: call('write', { path: target, content: 'first line\nsecond line' }) })
    const ask = await ui.nthAsk(0)
    expect(ask.request.spec).toEqual({
      method: 'select',
      title: `Allow write to ${target}?\n  first line\n  second line\n${target} is outside this thread's workspace.`,
      options: PERMISSION_CHOICES,
    })
    ask.resolve(answered({ value: DENY }))
    await rec.next('settled')
    const end = rec.of('tool-end')[0]
    expect(end.isError).toBe(true)
    expect(end.result.text).toBe('The user denied this write call, so it did not run.')
    expect(existsSync(target)).toBe(false)
    // The decision is in the thread's session, beside the tool's error result.
    expect(permissionEntries(dataDir)).toEqual([
      { toolCallId: expect.any(String), tool: 'write', decision: 'deny', by: 'user', outside: [target] },
    ])
  })

  it('reading a file inside the workspace runs without a question', async () => {
    const { runtime, rec, ui, workspace } = await setup()
    writeFileSync(join(workspace, 'notes.txt'), 'inside the workspace\n')
    runtime.prompt({ messageId: 'p', text: call('read', { path: 'notes.txt' }) })
    await rec.next('settled')
    expect(ui.asks).toEqual([])
    const end = rec.of('tool-end')[0]
    expect(end.isError).toBe(false)
    expect(end.result.text).toContain('inside the workspace')
  })

  it('reading outside the workspace asks even though read is allowed, also through a symlink that leads out', async () => {
    const { runtime, rec, ui, workspace, outside } = await setup()
    writeFileSync(join(outside, 'secret.txt'), 'not yours\n')
    symlinkSync(outside, join(workspace, 'link'))
    runtime.prompt({ messageId: 'p', text: call('read', { path: 'link/secret.txt' }) })
    const ask = await ui.nthAsk(0)
    expect(ask.request.spec).toMatchObject({ title: expect.stringContaining(`${join(workspace, 'link/secret.txt')} is outside`) })
    ask.resolve({ outcome: 'timeout' })
    await rec.next('settled')
    const end = rec.of('tool-end')[0]
    expect(end.isError).toBe(true)
    expect(end.result.text).toMatch(/timed out, so it did not run/)
  })

  it('bash asks; "Allow for this thread" lets the next bash call in that thread run unasked, and another thread still asks', async () => {
    const { runtime, rec, ui, open } = await setup()
    runtime.prompt({ messageId: 'p1', text: call('bash', { command: 'echo one' }) })
    ;(await ui.nthAsk(0)).resolve(answered({ value: ALLOW_FOR_THREAD }))
    await rec.next('settled')
    expect(rec.of('tool-end')[0].result.text).toContain('one')

    runtime.prompt({ messageId: 'p2', text: call('bash', { command: 'echo two' }) })
    await rec.next('settled', 2)
    expect(ui.asks).toHaveLength(1)
    const second = rec.of('tool-end')[1]
    expect(second.isError).toBe(false)
    expect(second.result.text).toContain('two')

    const other = await open('other')
    other.runtime.prompt({ messageId: 'p3', text: call('bash', { command: 'echo three' }) })
    ;(await other.ui.nthAsk(0)).resolve(answered({ value: DENY }))
    await other.rec.next('settled')
    expect(other.rec.of('tool-end')[0].isError).toBe(true)
  })

  it('a tool the policy denies is blocked without asking, and the model is told why', async () => {
    const policy = parseToolPolicy({ tools: { bash: 'deny' } })
    if (!policy.ok) throw new Error(policy.reason)
    const { runtime, rec, ui, workspace } = await setup(policy.policy)
    runtime.prompt({ messageId: 'p', text: call('bash', { command: 'echo made > made.txt' }) })
    await rec.next('settled')
    expect(ui.asks).toEqual([])
    const end = rec.of('tool-end')[0]
    expect(end.isError).toBe(true)
    expect(end.result.text).toBe('The tool policy does not allow bash, so it did not run.')
    expect(existsSync(join(workspace, 'made.txt'))).toBe(false)
  })

  it('"outsideWorkspace": "deny" refuses a path outside the workspace without asking, even for an allowed tool', async () => {
    const policy = parseToolPolicy({ outsideWorkspace: 'deny' })
    if (!policy.ok) throw new Error(policy.reason)
    const { runtime, rec, ui, outside } = await setup(policy.policy)
    writeFileSync(join(outside, 'secret.txt'), 'not yours\n')
    runtime.prompt({ messageId: 'p', text: call('read', { path: join(outside, 'secret.txt') }) })
    await rec.next('settled')
    expect(ui.asks).toEqual([])
    expect(rec.of('tool-end')[0].result.text).toMatch(/does not allow read outside the workspace/)
  })
})

describe('workspace paths', () => {
  it('a file written through a dangling symlink that points outside the workspace counts as outside', () => {
    const tmp = tempDir()
    cleanups.push(tmp.cleanup)
    const workspace = join(tmp.dir, 'workspace')
    mkdirSync(workspace)
    symlinkSync(join(tmp.dir, 'elsewhere', 'new.txt'), join(workspace, 'innocent.txt'))
    expect(contains(workspace, 'innocent.txt')).toBe(false)
    expect(contains(workspace, 'not-yet/new.txt')).toBe(true)
    expect(contains(workspace, '../workspace-sibling.txt')).toBe(false)
  })

  it('"~/" in a tool path means the home directory, as pi reads it, not a folder in the workspace', () => {
    expect(toolPath('~/.ssh/id_rsa', '/work/ws')).not.toMatch(/^\/work\/ws/)
    expect(toolPath('@src/a.ts', '/work/ws')).toBe('/work/ws/src/a.ts')
  })
})

describe('tool policy file', () => {
  it('a policy file lies over the defaults: "*" rules extension and MCP tools, read stays allowed, bash still asks', () => {
    const check = parseToolPolicy({ tools: { '*': 'ask', write: 'deny' } })
    expect(check.ok).toBe(true)
    if (!check.ok) return
    expect(['read', 'bash', 'write', 'mcp_search', 'constructor'].map((t) => ruleFor(check.policy, t))).toEqual([
      'allow',
      'ask',
      'deny',
      'ask',
      'ask',
    ])
    expect(check.policy.outsideWorkspace).toBe('ask')
  })

  it('a bad policy file is refused, naming the file and the field at fault', () => {
    const tmp = tempDir()
    cleanups.push(tmp.cleanup)
    const file = join(tmp.dir, 'policy.json')
    const refusal = (text: string) => {
      writeFileSync(file, text)
      try {
        loadToolPolicy(file)
      } catch (error) {
        expect(error).toBeInstanceOf(ToolPolicyError)
        return (error as Error).message
      }
      throw new Error('the policy was accepted')
    }
    expect(refusal('{"tools":{"bash":"yes"}}')).toBe(`${file}: tools.bash must be "allow", "ask" or "deny", not "yes"`)
    expect(refusal('{"outsideWorkspace":"allow"}')).toBe(`${file}: outsideWorkspace must be "ask" or "deny", not "allow"`)
    expect(refusal('{"tool":{"bash":"allow"}}')).toMatch(new RegExp(`^${file}: tool is not a policy field`))
    expect(refusal('{"tools": ')).toMatch(new RegExp(`^${file}: not JSON`))
  })

  it('the server refuses to start with a bad --tools-policy file and says which field is wrong', () => {
    const tmp = tempDir()
    cleanups.push(tmp.cleanup)
    const file = join(tmp.dir, 'policy.json')
    writeFileSync(file, '{"tools":{"write":"never"}}')
    expect(() => parseConfig(['--tools-policy', file, '--workspace', tmp.dir], {})).toThrow(ConfigError)
    expect(() => parseConfig(['--tools-policy', file, '--workspace', tmp.dir], {})).toThrow(
      `--tools-policy ${file}: tools.write must be "allow", "ask" or "deny", not "never"`,
    )
  })
})
