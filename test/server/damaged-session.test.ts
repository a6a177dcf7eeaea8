/**
 * A damaged session file on a real threadhost process: the server starts, only that thread is
 * unavailable (listed with the reason, prompts refused), its file is never written, and it can be
 * deleted. Both with the database kept and with it rebuilt from the session directories.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ThreadSummary } from '../../src/schemas/index.js'
import { spawnedServers } from '../support/spawn-server.js'
import { api, is, SseClient } from './harness.js'

const { cleanups, startProcess, tempDataDir } = spawnedServers('damaged')

async function ran(url: string, threadId: string, message: string, run: number): Promise<void> {
  const tab = await SseClient.open(`${url}/api/threads/${threadId}/follow`)
  cleanups.push(() => tab.close())
  expect((await api(url, 'POST', `/api/threads/${threadId}/prompt`, { message })).status).toBe(202)
  await tab.waitFor(is('status', { busy: false, run }))
  tab.close()
}

async function onlyItsThreadUnavailable(index: 'kept' | 'rebuilt'): Promise<void> {
  const dataDir = await tempDataDir()
  const args = ['--port', '0', '--data-dir', dataDir, '--demo-delay-ms', '2']
  const first = startProcess(args)
  const url = await first.url
  for (const id of ['bad', 'good']) {
    await api(url, 'POST', '/api/threads', { id })
    await ran(url, id, `hello ${id}`, 1)
  }
  first.child.kill('SIGTERM')
  expect(await first.exit).toBe(0)

  const file = join(dataDir, 'sessions', 'bad', 'session.jsonl')
  const lines = readFileSync(file, 'utf8').split('\n')
  lines[0] = lines[0].replace('"cwd"', '"cwx"')
  writeFileSync(file, lines.join('\n'))
  const bytes = readFileSync(file)
  if (index === 'rebuilt') for (const suffix of ['', '-wal', '-shm']) rmSync(join(dataDir, `threadhost.db${suffix}`), { force: true })

  const second = startProcess(args)
  const url2 = await second.url
  // Every session file is checked behind the start (threadhost answers at once): wait for that check to list it.
  let threads: ThreadSummary[] = []
  for (let tries = 0; tries < 500; tries++) {
    threads = (await api(url2, 'GET', '/api/threads')).body.threads as ThreadSummary[]
    if (threads.some((t) => t.unavailable)) break
    await new Promise((r) => setTimeout(r, 10))
  }
  expect(threads.map((t) => t.threadId).sort()).toEqual(['bad', 'good'])
  expect(threads.find((t) => t.threadId === 'bad')?.unavailable).toMatch(/header line has no cwd/)
  expect(threads.find((t) => t.threadId === 'good')?.unavailable).toBeUndefined()

  const refused = await api(url2, 'POST', '/api/threads/bad/prompt', { message: 'would rewrite it' })
  expect(refused.status).toBe(409)
  expect(refused.body).toMatchObject({ reason: 'unavailable' })
  expect(readFileSync(file).equals(bytes)).toBe(true)

  await ran(url2, 'good', 'still here', 2)
  expect(readFileSync(file).equals(bytes)).toBe(true)

  expect((await api(url2, 'DELETE', '/api/threads/bad')).status).toBeLessThan(300)
  expect(existsSync(file)).toBe(false)
  const after = (await api(url2, 'GET', '/api/threads')).body.threads as ThreadSummary[]
  expect(after.map((t) => t.threadId)).toEqual(['good'])
  second.child.kill('SIGKILL')
}

describe('a damaged session file', () => {
  it('a damaged session file makes only its thread unavailable: listed with the reason, a prompt is 409 unavailable, the file stays byte-identical, other threads work and DELETE removes it', () =>
    onlyItsThreadUnavailable('kept'),
  60_000)
  it('a damaged session file found while the index is rebuilt is listed unavailable too, never rewritten', () => onlyItsThreadUnavailable('rebuilt'), 60_000)
})
