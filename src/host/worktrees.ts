/**
 * Worktrees per thread (opt-in, `worktree: true` when a thread is created in a git workspace): the
 * thread works in its own git worktree on its own branch, `threadhost/<thread>`, made from the
 * workspace's HEAD under `<data dir>/worktrees/<thread>` — so two threads can work on one repository
 * at once without touching each other's files or the user's checkout. It is listed with the thread
 * and removed with it; a delete is refused (and asks) while its branch holds commits no other branch
 * has, or its files changes not committed, until the user says to discard them.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { findRepository, git } from './checkpoints/git.js'

export interface WorktreeInfo {
  /** The worktree's folder (the thread's workspace is this, or the same subfolder of it as asked). */
  path: string
  branch: string
  /** The repository's main folder it was made from. */
  repository: string
}

export type WorktreeCreated = { kind: 'created'; cwd: string; worktree: WorktreeInfo } | { kind: 'invalid'; reason: string }

/** What a delete would lose: commits only this thread's branch has, and changes not committed. */
export interface WorktreeHolds {
  commits: string[]
  uncommitted: string[]
}

export class Worktrees {
  readonly #root: string

  constructor(dataDir: string) {
    this.#root = join(dataDir, 'worktrees')
  }

  #file(threadId: string): string {
    return join(this.#root, `${threadId}.json`)
  }

  async create(threadId: string, cwd: string): Promise<WorktreeCreated> {
    const repo = await findRepository(cwd)
    if (!repo) return { kind: 'invalid', reason: `the workspace '${cwd}' is not in a git repository, so a thread there cannot have its own worktree` }
    const path = join(this.#root, threadId)
    const branch = `threadhost/${threadId}`
    mkdirSync(this.#root, { recursive: true })
    try {
      await git(['worktree', 'add', '-q', '-b', branch, path, 'HEAD'], { cwd: repo.top, env: {} })
    } catch (error) {
      return { kind: 'invalid', reason: `a worktree could not be made: ${error instanceof Error ? error.message : String(error)}` }
    }
    const worktree: WorktreeInfo = { path, branch, repository: repo.top }
    writeFileSync(this.#file(threadId), JSON.stringify(worktree))
    // A thread asked for in a subfolder of the repository works in the same subfolder of its worktree.
    return { kind: 'created', cwd: join(path, relative(repo.top, cwd)), worktree }
  }

  /** The thread's worktree, when it has one (a fork shares its source's folder but owns none). */
  info(threadId: string): WorktreeInfo | undefined {
    try {
      return JSON.parse(readFileSync(this.#file(threadId), 'utf8')) as WorktreeInfo
    } catch {
      return undefined
    }
  }

  /** What removing the thread's worktree would lose; undefined when it would lose nothing (or it has none). */
  async holds(threadId: string): Promise<WorktreeHolds | undefined> {
    const info = this.info(threadId)
    if (!info || !existsSync(info.path)) return undefined
    const run = (args: string[]) => git(args, { cwd: info.path, env: {} })
    const commits = (await run(['log', '--format=%h %s', 'HEAD', '--not', `--exclude=${info.branch}`, '--branches']))
      .split('\n')
      .filter(Boolean)
    const uncommitted = (await run(['status', '--porcelain', '-z'])).split('\0').filter(Boolean).map((line) => line.slice(3))
    return commits.length > 0 || uncommitted.length > 0 ? { commits, uncommitted } : undefined
  }

  /** Removes the worktree and its branch (the delete asked first when they held anything). */
  async remove(threadId: string): Promise<void> {
    const info = this.info(threadId)
    if (!info) return
    const run = (args: string[]) => git(args, { cwd: info.repository, env: {} }).catch(() => '')
    await run(['worktree', 'remove', '--force', info.path])
    rmSync(info.path, { recursive: true, force: true })
    await run(['worktree', 'prune'])
    await run(['branch', '-D', info.branch])
    rmSync(this.#file(threadId), { force: true })
  }
}
