/**
 * Checkpoints on the real pi runtime and real git (issue 22): each run's changes in a git
 * repository and in a plain directory, through pi's file tools and through bash; a run's diff; revert
 * and redo; a revert refused during a run or over a file the user changed; and the user's own git
 * state (branch, index, stash, refs, objects) never touched.
 */
import { randomUUID } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ThreadRegistry } from '../../src/host/thread-registry.js'
import { Workspaces } from '../../src/host/workspaces.js'
import { createPiRuntimeFactory, parseToolPolicy, PiModels } from '../../src/runtime/index.js'
import { buildApp } from '../../src/server/app.js'
import { api, is, SseClient } from './harness.js'
import { gitIn } from './git-repo.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const quiet = { info() {}, warn() {}, error() {} }
const ALLOW = parseToolPolicy({ tools: { bash: 'allow', write: 'allow', edit: 'allow' } })


/** A git repository with three committed files. */
async function repo(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'threadhost-repo-'))
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  gitIn(dir, 'init', '-q', '-b', 'main')
  await writeFile(join(dir, 'a.txt'), 'alpha\n')
  await writeFile(join(dir, 'b.txt'), 'bravo\n')
  await writeFile(join(dir, 'c.txt'), 'charlie\n')
  gitIn(dir, 'add', '.')
  gitIn(dir, 'commit', '-q', '-m', 'start')
  return dir
}

async function host(workspace: string, options: { demoDelayMs?: number } = {}) {
  const dataDir = await mkdtemp(join(tmpdir(), 'threadhost-cp-'))
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }))
  const agentDir = join(dataDir, 'agent')
  const models = await PiModels.create({ agentDir, demoDelayMs: options.demoDelayMs ?? 2 })
  if (!ALLOW.ok) throw new Error('policy')
  const registry = await ThreadRegistry.open({
    dataDir,
    runtimes: createPiRuntimeFactory({ dataDir, agentDir, models, log: quiet, toolPolicy: ALLOW.policy }),
    models,
    workspaces: new Workspaces([workspace]),
    defaultModel: 'demo',
    idleMs: 600_000,
  })
  const app = await buildApp({ registry })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  cleanups.push(async () => {
    await registry.shutdown()
    await app.close()
  })
  await api(url, 'POST', '/api/threads', { id: 't', cwd: workspace })
  const tab = await SseClient.open(`${url}/api/threads/t/follow`)
  cleanups.push(() => tab.close())
  /** Sends `calls` (one tool call per line) as run `run` and waits for its changes. */
  const run = async (run: number, ...calls: Array<[string, unknown]>) => {
    const message = calls.map(([tool, args]) => `call ${tool} ${JSON.stringify(args)}`).join('\n')
    expect((await api(url, 'POST', '/api/threads/t/prompt', { message })).status).toBe(202)
    return (await tab.waitFor(is('run-changes', { run }))).data
  }
  return { url, dataDir, registry, tab, run }
}

const read = (dir: string, file: string) => (existsSync(join(dir, file)) ? readFileSync(join(dir, file), 'utf8') : undefined)

describe('checkpoints in a git repository', () => {
  it('a run that writes, edits and deletes through the file tools and bash: its diff names each file, once per run', async () => {
    const dir = await repo()
    const { url, run } = await host(dir)
    const changes = await run(
      1,
      ['write', { path: 'new.txt', content: 'one\ntwo\n' }],
      ['edit', { path: 'a.txt', edits: [{ oldText: 'alpha', newText: 'ALPHA' }] }],
      ['bash', { command: 'rm c.txt && printf "\\000\\001" > blob.bin' }],
    )
    expect(changes.files).toEqual([
      { path: 'a.txt', status: 'modified', added: 1, removed: 1 },
      { path: 'blob.bin', status: 'added', added: 0, removed: 0, binary: true },
      { path: 'c.txt', status: 'deleted', added: 0, removed: 1 },
      { path: 'new.txt', status: 'added', added: 2, removed: 0 },
    ])
    expect(changes.untracked).toBeUndefined()

    const report = await api(url, 'GET', '/api/threads/t/runs/1/changes')
    expect(report.status).toBe(200)
    const byPath = Object.fromEntries(report.body.files.map((f: { path: string }) => [f.path, f]))
    expect(byPath['a.txt'].patch).toContain('-alpha\n+ALPHA')
    expect(byPath['blob.bin'].patch).toBeUndefined()
    expect(byPath['new.txt'].patch).toContain('+one\n+two')
    expect((await api(url, 'GET', '/api/threads/t/changes')).body.files.map((f: { path: string }) => f.path)).toEqual(['a.txt', 'blob.bin', 'c.txt', 'new.txt'])
    expect((await api(url, 'GET', '/api/threads/t/runs/7/changes')).body.code).toBe('NO_CHECKPOINT')
  })

  it("never touches the user's branch, index, stash, refs or objects", async () => {
    const dir = await repo()
    await writeFile(join(dir, 'b.txt'), 'bravo staged\n')
    gitIn(dir, 'add', 'b.txt')
    const seen = () => ({
      head: gitIn(dir, 'rev-parse', 'HEAD'),
      branch: gitIn(dir, 'branch', '--show-current'),
      index: readFileSync(join(dir, '.git/index')).toString('base64'),
      refs: gitIn(dir, 'for-each-ref'),
      stash: gitIn(dir, 'stash', 'list'),
      objects: gitIn(dir, 'count-objects', '-v'),
    })
    const before = seen()
    const { url, run } = await host(dir)
    await run(1, ['write', { path: 'new.txt', content: 'x\n' }], ['edit', { path: 'a.txt', edits: [{ oldText: 'alpha', newText: 'A' }] }])
    expect((await api(url, 'POST', '/api/threads/t/revert', { toRun: 1 })).status).toBe(200)
    expect((await api(url, 'POST', '/api/threads/t/redo')).status).toBe(200)
    expect(seen()).toEqual(before)
  })

  it('revert to before run 2 of 3 restores the files runs 2 and 3 changed; redo brings them back; every follower hears both', async () => {
    const dir = await repo()
    const { url, run, tab } = await host(dir)
    const other = await SseClient.open(`${url}/api/threads/t/follow`)
    cleanups.push(() => other.close())
    await run(1, ['write', { path: 'one.txt', content: '1\n' }])
    await run(2, ['edit', { path: 'a.txt', edits: [{ oldText: 'alpha', newText: 'two' }] }], ['bash', { command: 'rm b.txt' }])
    await run(3, ['write', { path: 'three/deep.txt', content: '3\n' }], ['edit', { path: 'a.txt', edits: [{ oldText: 'two', newText: 'three' }] }])
    await tab.waitFor(is('status', { busy: false, run: 3 }))

    const key = { 'idempotency-key': randomUUID() }
    const reverted = await api(url, 'POST', '/api/threads/t/revert', { toRun: 2 }, key)
    expect(reverted).toMatchObject({ status: 200, body: { action: 'revert', runs: [2, 3], files: ['a.txt', 'b.txt', 'three/deep.txt'] } })
    expect([read(dir, 'a.txt'), read(dir, 'b.txt'), read(dir, 'one.txt'), existsSync(join(dir, 'three'))]).toEqual(['alpha\n', 'bravo\n', '1\n', false])
    for (const follower of [tab, other]) {
      expect((await follower.waitFor(is('workspace-restored', { action: 'revert' }))).data).toMatchObject({ reverted: [2, 3], restored: [], canRedo: true })
    }
    // The same key again: the answer is replayed, nothing runs twice.
    const again = await api(url, 'POST', '/api/threads/t/revert', { toRun: 2 }, key)
    expect(again).toMatchObject({ status: 200, body: reverted.body })
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect((await api(url, 'POST', '/api/threads/t/revert', { toRun: 2 })).body.code).toBe('NOTHING_TO_RESTORE')
    // The model is told, in its conversation.
    const note = await tab.waitFor(is('custom-message', { customType: 'threadhost.revert' }))
    expect(note.data.text).toContain('reverted the workspace changes of runs 2, 3')

    const redone = await api(url, 'POST', '/api/threads/t/redo')
    expect(redone).toMatchObject({ status: 200, body: { action: 'redo', runs: [2, 3] } })
    expect([read(dir, 'a.txt'), read(dir, 'b.txt'), read(dir, 'three/deep.txt')]).toEqual(['three\n', undefined, '3\n'])
    expect((await other.waitFor(is('workspace-restored', { action: 'redo' }))).data).toMatchObject({ restored: [2, 3], canRedo: false })
    expect((await api(url, 'POST', '/api/threads/t/redo')).body.code).toBe('NOTHING_TO_RESTORE')
  })

  it('a revert is refused with the conflicting paths when the user changed a file since, and nothing is overwritten', async () => {
    const dir = await repo()
    const { url, run } = await host(dir)
    await run(1, ['edit', { path: 'a.txt', edits: [{ oldText: 'alpha', newText: 'agent' }] }], ['write', { path: 'n.txt', content: 'n\n' }])
    writeFileSync(join(dir, 'a.txt'), 'the user was here\n')
    const refused = await api(url, 'POST', '/api/threads/t/revert', { toRun: 1 })
    expect(refused).toMatchObject({ status: 409, body: { code: 'CHANGES_CONFLICT', reason: 'conflict', paths: ['a.txt'] } })
    expect([read(dir, 'a.txt'), read(dir, 'n.txt')]).toEqual(['the user was here\n', 'n\n'])
    // A change to a file the revert does not touch is no conflict.
    writeFileSync(join(dir, 'a.txt'), 'agent\n')
    writeFileSync(join(dir, 'c.txt'), 'user edit elsewhere\n')
    expect((await api(url, 'POST', '/api/threads/t/revert', { toRun: 1 })).status).toBe(200)
    expect([read(dir, 'a.txt'), read(dir, 'n.txt'), read(dir, 'c.txt')]).toEqual(['alpha\n', undefined, 'user edit elsewhere\n'])
  })

  it('a revert during a run is refused 409 busy, and the files stay as they are', async () => {
    const dir = await repo()
    const { url, run, tab } = await host(dir, { demoDelayMs: 20 })
    await run(1, ['write', { path: 'n.txt', content: 'n\n' }])
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    await api(url, 'POST', '/api/threads/t/prompt', { message: 'slow 500' })
    await tab.waitFor(is('status', { busy: true, run: 2 }))
    expect(await api(url, 'POST', '/api/threads/t/revert', { toRun: 1 })).toMatchObject({ status: 409, body: { code: 'THREAD_BUSY', reason: 'busy' } })
    expect(read(dir, 'n.txt')).toBe('n\n')
    await api(url, 'POST', '/api/threads/t/abort', {})
    await tab.waitFor(is('status', { busy: false, run: 2 }))
  })

  it("a thread's checkpoints go when the thread is deleted", async () => {
    const dir = await repo()
    const { url, dataDir, run } = await host(dir)
    await run(1, ['write', { path: 'n.txt', content: 'n\n' }])
    expect(existsSync(join(dataDir, 'checkpoints', 't', 'state.json'))).toBe(true)
    expect((await api(url, 'DELETE', '/api/threads/t')).status).toBe(204)
    expect(existsSync(join(dataDir, 'checkpoints', 't'))).toBe(false)
  })
})

describe('checkpoints outside git', () => {
  it("tracks what the file tools changed, marks bash's changes not tracked, and reverts the tracked files", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'threadhost-plain-'))
    cleanups.push(() => rm(dir, { recursive: true, force: true }))
    await mkdir(join(dir, 'src'))
    await writeFile(join(dir, 'src/keep.txt'), 'keep\n')
    await writeFile(join(dir, 'gone.txt'), 'gone\n')
    const { url, run } = await host(dir)
    const first = await run(1, ['write', { path: 'src/new.txt', content: 'new\n' }], ['edit', { path: 'src/keep.txt', edits: [{ oldText: 'keep', newText: 'kept' }] }])
    expect(first.files).toEqual([
      { path: 'src/keep.txt', status: 'modified', added: 1, removed: 1 },
      { path: 'src/new.txt', status: 'added', added: 1, removed: 0 },
    ])
    const second = await run(2, ['bash', { command: 'rm gone.txt' }])
    expect(second).toMatchObject({ files: [], untracked: expect.stringContaining('not tracked') })

    expect((await api(url, 'POST', '/api/threads/t/revert', { toRun: 1 })).body).toMatchObject({ files: ['src/keep.txt', 'src/new.txt'], runs: [1, 2] })
    // What bash did is not tracked outside git, so it stays done.
    expect([read(dir, 'src/keep.txt'), read(dir, 'src/new.txt'), read(dir, 'gone.txt')]).toEqual(['keep\n', undefined, undefined])
    expect((await api(url, 'POST', '/api/threads/t/redo')).status).toBe(200)
    expect([read(dir, 'src/keep.txt'), read(dir, 'src/new.txt')]).toEqual(['kept\n', 'new\n'])
  })
})
