/**
 * A revert is atomic against SIGKILL (issue 22): its intent is journaled before the first file is
 * restored, and the next start finishes it — so the workspace is found before the revert or after
 * it, never half-way. A real threadhost process, killed the moment the intent is on disk.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, watch, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { spawnedServers } from '../support/spawn-server.js'
import { api, is, SseClient } from './harness.js'

const { cleanups, startProcess, tempDataDir } = spawnedServers('checkpoint-crash')

const FILES = 2000
const name = (i: number) => `f${String(i).padStart(4, '0')}.txt`

describe('a revert and SIGKILL', () => {
  it('SIGKILL in the middle of a revert: the next start finishes it, so the workspace is after the revert, never half', async () => {
    const dataDir = await tempDataDir()
    const repo = await tempDataDir()
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: repo, env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } })
    git('init', '-q')
    for (let i = 0; i < FILES; i++) writeFileSync(join(repo, name(i)), 'before\n')
    git('add', '.')
    git('commit', '-q', '-m', 'start')
    const policy = join(dataDir, 'policy.json')
    writeFileSync(policy, JSON.stringify({ tools: { bash: 'allow' } }))
    const args = ['--port', '0', '--data-dir', join(dataDir, 'data'), '--workspace', repo, '--tools-policy', policy, '--demo-delay-ms', '1']

    const first = startProcess(args)
    const url = await first.url
    await api(url, 'POST', '/api/threads', { id: 't', cwd: repo })
    const tab = await SseClient.open(`${url}/api/threads/t/follow`)
    cleanups.push(() => tab.close())
    const command = 'for f in f*.txt; do echo after > "$f"; done'
    await api(url, 'POST', '/api/threads/t/prompt', { message: `call bash ${JSON.stringify({ command })}` })
    expect((await tab.waitFor(is('run-changes', { run: 1 }), 60_000)).data.files).toHaveLength(FILES)

        // Killed as soon as the revert's intent is on disk: its files are being restored.
    const checkpoints = join(dataDir, 'data', 'checkpoints', 't')
    const watcher = watch(checkpoints, (_event, file) => {
      if (file === 'pending.json') first.child.kill('SIGKILL')
    })
    cleanups.push(() => watcher.close())
    void api(url, 'POST', '/api/threads/t/revert', { toRun: 1 }).catch(() => undefined)
    await first.exit
    watcher.close()
    tab.close()
    expect(existsSync(join(checkpoints, 'pending.json'))).toBe(true)

    const second = startProcess(args)
    const url2 = await second.url
    // Held until the threads are recovered (the server listens before that): the revert is finished by then.
    await api(url2, 'GET', '/api/threads')
    const contents = new Set(Array.from({ length: FILES }, (_, i) => readFileSync(join(repo, name(i)), 'utf8')))
    expect([...contents]).toEqual(['before\n'])
    expect(existsSync(join(checkpoints, 'pending.json'))).toBe(false)
    const follower = await SseClient.open(`${url2}/api/threads/t/follow`)
    cleanups.push(() => follower.close())
    expect((await follower.waitFor(is('snapshot'))).data.changes.runs['1']).toMatchObject({ reverted: true })
    expect((await api(url2, 'POST', '/api/threads/t/redo')).status).toBe(200)
    expect(readFileSync(join(repo, name(0)), 'utf8')).toBe('after\n')
  }, 120_000)
})
