/**
 * Worktrees per thread (issue 22): a thread created with `worktree: true` in a git workspace works in
 * its own worktree on its own branch under the data dir, listed with the thread and removed with it —
 * after asking when it holds commits no other branch has.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { api, is, SseClient, startHarness, type Harness } from './harness.js'
import { gitIn } from './git-repo.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function setup(): Promise<{ h: Harness; repo: string }> {
  const repo = await mkdtemp(join(tmpdir(), 'threadhost-wt-repo-'))
  cleanups.push(() => rm(repo, { recursive: true, force: true }))
  gitIn(repo, 'init', '-q', '-b', 'main')
  await writeFile(join(repo, 'a.txt'), 'alpha\n')
  gitIn(repo, 'add', '.')
  gitIn(repo, 'commit', '-q', '-m', 'start')
  const h = await startHarness({ workspaces: [repo] })
  cleanups.push(() => h.close())
  return { h, repo }
}

describe('worktrees per thread', () => {
  it('two threads on one repository each get their own worktree and branch, listed with the thread, apart from the checkout', async () => {
    const { h, repo } = await setup()
    for (const id of ['w1', 'w2']) expect((await api(h.url, 'POST', '/api/threads', { id, cwd: repo, worktree: true })).status).toBe(201)
    const one = (await api(h.url, 'GET', '/api/threads/w1')).body
    const two = (await api(h.url, 'GET', '/api/threads/w2')).body
    expect(one.worktree).toEqual({ path: join(h.dataDir, 'worktrees', 'w1'), branch: 'threadhost/w1' })
    expect(one.cwd).toBe(one.worktree.path)
    expect(two.worktree.branch).toBe('threadhost/w2')
    expect(gitIn(repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/threadhost').split('\n').filter(Boolean)).toEqual(['threadhost/w1', 'threadhost/w2'])

    // A change in one worktree is seen in neither the other nor the checkout; the thread runs there.
    const tab = await SseClient.open(`${h.url}/api/threads/w1/follow`)
    cleanups.push(() => tab.close())
    writeFileSync(join(one.worktree.path, 'a.txt'), 'changed in w1\n')
    expect(readFileSync(join(two.worktree.path, 'a.txt'), 'utf8')).toBe('alpha\n')
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('alpha\n')
    await api(h.url, 'POST', '/api/threads/w1/prompt', { message: 'hello' })
    await tab.waitFor(is('status', { busy: false, run: 1 }))
  })

  it('a delete asks first when the worktree holds commits no other branch has, and discards them only when told', async () => {
    const { h, repo } = await setup()
    await api(h.url, 'POST', '/api/threads', { id: 'w', cwd: repo, worktree: true })
    const path = join(h.dataDir, 'worktrees', 'w')
    writeFileSync(join(path, 'b.txt'), 'bravo\n')
    gitIn(path, 'add', 'b.txt')
    gitIn(path, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'work of the thread')

    const asked = await api(h.url, 'DELETE', '/api/threads/w')
    expect(asked).toMatchObject({ status: 409, body: { code: 'WORKTREE_HELD', reason: 'worktree-held', uncommitted: [] } })
    expect(asked.body.commits).toEqual([expect.stringContaining('work of the thread')])
    expect(existsSync(path)).toBe(true)

    expect((await api(h.url, 'DELETE', '/api/threads/w?discardWorktree=true')).status).toBe(204)
    expect(existsSync(path)).toBe(false)
    expect(gitIn(repo, 'for-each-ref', 'refs/heads/threadhost').trim()).toBe('')
    expect(gitIn(repo, 'worktree', 'list').split('\n').filter(Boolean)).toHaveLength(1)
  })

  it('a clean worktree goes with its thread at once; a workspace outside git cannot have one', async () => {
    const { h, repo } = await setup()
    await api(h.url, 'POST', '/api/threads', { id: 'w', cwd: repo, worktree: true })
    expect((await api(h.url, 'DELETE', '/api/threads/w')).status).toBe(204)
    expect(existsSync(join(h.dataDir, 'worktrees', 'w'))).toBe(false)

    const plain = await mkdtemp(join(tmpdir(), 'threadhost-wt-plain-'))
    cleanups.push(() => rm(plain, { recursive: true, force: true }))
    const other = await startHarness({ workspaces: [plain] })
    cleanups.push(() => other.close())
    const refused = await api(other.url, 'POST', '/api/threads', { id: 'p', cwd: plain, worktree: true })
    expect(refused).toMatchObject({ status: 422, body: { code: 'SETTINGS_REFUSED', error: expect.stringContaining('not in a git repository') } })
  })
})
