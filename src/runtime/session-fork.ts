/**
 * Forking a thread's pi session, and what a session file says for a thread's summary.
 *
 * A fork is pi's own branching: the source session is opened read-only in a second SessionManager
 * (never the live session's, whose file it would switch) and `createBranchedSession` extracts the
 * path up to the cut into a new file whose header names the source (`parentSession`) — the link a
 * fork keeps across restarts. The source file is only read, so a fork may be taken mid-run.
 */
import { closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { basename, dirname, resolve } from 'node:path'
import { parseSessionEntries, SessionManager } from '@earendil-works/pi-coding-agent'
import type { ForkRequest, ForkResult, PersistedFacts } from './port.js'
import { forkPoint, lastRun, persistedFacts, readSessionEntries, readSessionFile } from './transcript.js'

type Paths = (threadId: string) => { dir: string; file: string }

export function piSessionForks(paths: Paths, threadOfSessionDir: (key: string) => string | undefined) {
  const threadOfFile = (file: string) => threadOfSessionDir(basename(dirname(file)))

  return {
    async fork(request: ForkRequest): Promise<ForkResult> {
      const { sourceThreadId, threadId } = request
      const source = resolve(paths(sourceThreadId).file)
      const target = paths(threadId)
      if (existsSync(target.file)) throw new Error(`thread ${threadId} already has a session file`)
      const cut =
        'beforeMessageId' in request
          ? forkPoint(await readSessionFile(source, sourceThreadId), request.beforeMessageId)
          : (await readSessionEntries(source, sourceThreadId)).some((e) => e.id === request.throughEntry)
            ? request.throughEntry
            : undefined
      if (cut === undefined) return { kind: 'unknown-message' }
      mkdirSync(target.dir, { recursive: true })
      try {
        const manager =
          cut === null
            ? SessionManager.create(SessionManager.open(source).getCwd(), target.dir, { parentSession: source })
            : SessionManager.open(source, target.dir)
        const written = cut === null ? undefined : manager.createBranchedSession(cut)
        if (written && existsSync(written)) renameSync(written, target.file)
        // pi writes a session only once it holds a message; a fork of the first prompt holds none,
        // and is written here so its link to the source is kept all the same.
        else writeLines(target.file, [manager.getHeader(), ...manager.getEntries()])
        return { kind: 'forked', lastRun: cut === null ? 0 : lastRun(manager.getBranch()) }
      } catch (error) {
        rmSync(target.dir, { recursive: true, force: true })
        throw error
      }
    },

    async describe(threadId: string): Promise<PersistedFacts | undefined> {
      const text = await readFile(paths(threadId).file, 'utf8').catch(() => undefined)
      return text === undefined ? undefined : persistedFacts(parseSessionEntries(text), threadOfFile)
    },
  }
}

function writeLines(file: string, entries: unknown[]): void {
  const fd = openSync(file, 'wx')
  try {
    writeSync(fd, entries.map((e) => `${JSON.stringify(e)}\n`).join(''))
  } finally {
    closeSync(fd)
  }
}
