/**
 * Where threads' pi sessions live on disk, and what is found there without building a runtime:
 * one directory per thread under `<dataDir>/sessions`, one fixed file name in it.
 */
import { readdir, readFile, rm, stat } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { DEMO_MODEL, DEMO_MODEL_ID, DEMO_PROVIDER } from './demo-model.js'
import type { TranscriptEntry } from '../schemas/index.js'
import type { PersistedThread } from './port.js'
import { branchOf, foldTranscript, persistedFacts, readSessionEntries, sessionFacts } from './transcript.js'
import { SessionTree } from './session-branches.js'
import { checkSession } from './session-file.js'

const SAFE_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/

/** Where a thread's pi session file lives: one directory per thread, one fixed file name. */
export function sessionPaths(dataDir: string, threadId: string): { dir: string; file: string } {
  const key = SAFE_ID.test(threadId) ? threadId : `x-${Buffer.from(threadId).toString('base64url')}`
  const dir = join(dataDir, 'sessions', key)
  return { dir, file: join(dir, 'session.jsonl') }
}

/** The thread id a session directory's name stands for (the inverse of `sessionPaths`), or undefined. */
export function threadIdOfSessionDir(key: string): string | undefined {
  if (key.startsWith('x-')) {
    const decoded = Buffer.from(key.slice(2), 'base64url').toString()
    // Only an id that is not safe as it is was encoded; a safe id beginning with `x-` is its own name.
    if (!SAFE_ID.test(decoded) && `x-${Buffer.from(decoded).toString('base64url')}` === key) return decoded
  }
  return SAFE_ID.test(key) ? key : undefined
}

/** The thread whose session file `path` is, or undefined when it is no thread's under this data dir. */
export function threadOfSessionFile(dataDir: string, path: string): string | undefined {
  const threadId = threadIdOfSessionDir(basename(dirname(path)))
  return threadId !== undefined && resolve(sessionPaths(dataDir, threadId).file) === resolve(path) ? threadId : undefined
}

/** The persisted transcript of a thread, read from its session file. */
export async function readPersistedTranscript(dataDir: string, threadId: string): Promise<TranscriptEntry[]> {
  const tree = new SessionTree(await readSessionEntries(sessionPaths(dataDir, threadId).file, threadId))
  return foldTranscript(branchOf([...tree.entries]), (id) => tree.versionsOf(id))
}

/** Every thread with a session file under the data dir, with what its file says. */
export async function listPersistedThreads(dataDir: string): Promise<PersistedThread[]> {
  const root = join(dataDir, 'sessions')
  const keys = await readdir(root).catch(() => [] as string[])
  const found: PersistedThread[] = []
  for (const key of keys) {
    const threadId = threadIdOfSessionDir(key)
    if (threadId === undefined) continue
    const { file } = sessionPaths(dataDir, threadId)
    const info = await stat(file).catch(() => undefined)
    if (!info?.isFile()) continue
    const check = checkSession(await readFile(file).catch(() => Buffer.alloc(0)))
    const facts = sessionFacts(check.kind === 'ok' ? check.entries : [])
    const model = facts.model
      ? facts.model.provider === DEMO_PROVIDER && facts.model.modelId === DEMO_MODEL_ID
        ? DEMO_MODEL
        : `${facts.model.provider}/${facts.model.modelId}`
      : undefined
    found.push({
      threadId,
      ...(facts.cwd ? { cwd: facts.cwd } : {}),
      ...(model ? { model } : {}),
      ...(facts.thinkingLevel ? { thinkingLevel: facts.thinkingLevel } : {}),
      createdAt: facts.createdAt ?? info.birthtimeMs,
      updatedAt: info.mtimeMs,
      lastRun: facts.lastRun,
      ...(check.kind === 'damaged' ? { damaged: check.reason } : {}),
      ...(check.kind === 'ok' ? { facts: persistedFacts(check.entries, (path) => threadIdOfSessionDir(basename(dirname(path)))) } : {}),
    })
  }
  return found
}

/** Removes a thread's session directory. */
export async function removePersisted(dataDir: string, threadId: string): Promise<void> {
  await rm(sessionPaths(dataDir, threadId).dir, { recursive: true, force: true })
}
