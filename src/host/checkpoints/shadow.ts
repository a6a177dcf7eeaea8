/**
 * A thread's shadow of its workspace: git trees of the workspace's state, written to an index and
 * an object store of the thread's own under the data dir — never the user's branch, index, stash,
 * refs or objects.
 *
 * - In a git repository (`repo`): git runs with the user's git dir (so `.gitignore`, excludes and
 *   attributes count as the user set them) but with `GIT_INDEX_FILE` and `GIT_OBJECT_DIRECTORY`
 *   pointing at the thread's files, the user's objects only read (an alternate). The thread's index
 *   starts as a copy of the user's, so a snapshot of a large repository hashes only what changed
 *   since the user's last `git add` (git's stat cache), not every file.
 * - Outside git (`plain`): a private repository holds the files the file tools touched (the
 *   content-addressed snapshot); bash may change anything, and what it did is not tracked.
 *
 * A snapshot is a tree id; an absent file is a path the tree lacks. Everything else (what changed,
 * restoring a tree's files) is git's plumbing on those trees.
 */
import { copyFile, mkdir, rmdir, stat, unlink } from 'node:fs/promises'
import { dirname, isAbsolute, join, relative, sep } from 'node:path'
import type { FileChange, FileDiff, FileStatus } from '../../schemas/index.js'
import { findRepository, git } from './git.js'

export type ShadowMode = 'repo' | 'plain'

/** The most of one report's diff text; past it a file's patch is cut and said to be. */
const REPORT_BYTES = 2 * 1024 * 1024
/** The most of one file's patch. */
const FILE_PATCH_BYTES = 256 * 1024

export interface ShadowOptions {
  /** The thread's own folder under the data dir (index, objects). */
  dir: string
  /** The thread's workspace. */
  cwd: string
  /** Folders inside the workspace that are never part of a snapshot (the data dir, when it lies inside). */
  exclude: string[]
  /** One git command is killed past this. */
  timeoutMs: number
}

export class WorkspaceShadow {
  private constructor(
    readonly mode: ShadowMode,
    /** The directory snapshots are taken from: the repository's top, or the workspace. */
    readonly top: string,
    private readonly env: Record<string, string>,
    private readonly options: ShadowOptions,
  ) {}

  static async open(options: ShadowOptions): Promise<WorkspaceShadow> {
    const index = join(options.dir, 'index')
    await mkdir(options.dir, { recursive: true })
    const repo = await findRepository(options.cwd)
    if (repo) {
      const objects = join(options.dir, 'objects')
      await mkdir(join(objects, 'info'), { recursive: true })
      const env = {
        GIT_DIR: repo.gitDir,
        GIT_WORK_TREE: repo.top,
        GIT_INDEX_FILE: index,
        GIT_OBJECT_DIRECTORY: objects,
        GIT_ALTERNATE_OBJECT_DIRECTORIES: repo.objects,
      }
      // git's stat cache from the user's own index: read, never written.
      if (!(await exists(index))) await copyFile(join(repo.gitDir, 'index'), index).catch(() => undefined)
      return new WorkspaceShadow('repo', repo.top, env, options)
    }
    const gitDir = join(options.dir, 'git')
    const env = { GIT_DIR: gitDir, GIT_WORK_TREE: options.cwd, GIT_INDEX_FILE: index }
    if (!(await exists(join(gitDir, 'HEAD')))) await git(['init', '-q'], { cwd: options.cwd, env: { GIT_DIR: gitDir }, timeoutMs: options.timeoutMs })
    return new WorkspaceShadow('plain', options.cwd, env, options)
  }

  #git(args: string[], maxBytes?: number): Promise<string> {
    return git(args, { cwd: this.top, env: this.env, timeoutMs: this.options.timeoutMs, ...(maxBytes ? { maxBytes } : {}) })
  }

  /** A path as the snapshot names it (relative to its top, `/`-separated); undefined outside it. */
  relative(path: string): string | undefined {
    const rel = relative(this.top, isAbsolute(path) ? path : join(this.options.cwd, path))
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return undefined
    return rel.split(sep).join('/')
  }

  #excludes(): string[] {
    return this.options.exclude.flatMap((dir) => {
      const rel = this.relative(dir)
      return rel ? [`:(exclude)${rel}`] : []
    })
  }

  /**
   * The workspace's state now. In a repository: everything git would add. Outside one: the files
   * already in the shadow (updated, or gone) and `paths` (added when they exist).
   */
  async snapshot(paths: string[] = []): Promise<string> {
    if (this.mode === 'repo') {
      await this.#git(['add', '-A', '--', '.', ...this.#excludes()])
    } else {
      await this.#git(['add', '-u', '--', '.'])
      await this.track(paths, false)
    }
    return (await this.#git(['write-tree'])).trim()
  }

  /** Outside git: adds `paths` as they are now to the shadow's index; the tree that results when `write`. */
  async track(paths: string[], write = true): Promise<string | undefined> {
    const present: string[] = []
    for (const path of paths) {
      const rel = this.relative(path)
      if (rel && (await isFile(join(this.top, rel)))) present.push(rel)
    }
    // -f: a file the agent changed is tracked even where the workspace's own .gitignore says otherwise.
    if (present.length > 0) await this.#git(['add', '-f', '--', ...present])
    return write ? (await this.#git(['write-tree'])).trim() : undefined
  }

  /** The paths whose content differs between two trees. */
  async changed(a: string, b: string): Promise<string[]> {
    if (a === b) return []
    const out = await this.#git(['diff-tree', '-r', '--no-renames', '--name-only', '-z', a, b])
    return out.split('\0').filter(Boolean)
  }

  /** What changed from `a` to `b`, file by file. */
  async summary(a: string, b: string): Promise<FileChange[]> {
    if (a === b) return []
    const status = (await this.#git(['diff-tree', '-r', '--no-renames', '--name-status', '-z', a, b])).split('\0')
    const numstat = (await this.#git(['diff-tree', '-r', '--no-renames', '--numstat', '-z', a, b])).split('\0').filter(Boolean)
    const counts = new Map<string, { added: number; removed: number; binary: boolean }>()
    for (const line of numstat) {
      const [added, removed, ...rest] = line.split('\t')
      counts.set(rest.join('\t'), { added: Number(added) || 0, removed: Number(removed) || 0, binary: added === '-' })
    }
    const files: FileChange[] = []
    for (let i = 0; i + 1 < status.length; i += 2) {
      const letter = status[i]
      const path = status[i + 1]
      if (!letter || !path) continue
      const count = counts.get(path) ?? { added: 0, removed: 0, binary: false }
      files.push({ path, status: statusOf(letter), added: count.added, removed: count.removed, ...(count.binary ? { binary: true } : {}) })
    }
    return files
  }

  /** `summary` with each file's unified diff, bounded (a binary file's is never dumped). */
  async diff(a: string, b: string): Promise<FileDiff[]> {
    const files = await this.summary(a, b)
    if (files.length === 0) return []
    const text = await this.#git(['diff-tree', '-r', '-p', '--no-renames', '--no-color', '--no-ext-diff', a, b], 64 * 1024 * 1024)
    // One section per file, in the same (path) order as the summary.
    const sections = text.split(/^(?=diff --git )/m).filter((s) => s.startsWith('diff --git '))
    let budget = REPORT_BYTES
    return files.map((file, i) => {
      if (file.binary) return file
      const patch = sections[i] ?? ''
      const limit = Math.min(FILE_PATCH_BYTES, Math.max(0, budget))
      budget -= Math.min(patch.length, limit)
      return patch.length > limit ? { ...file, patch: patch.slice(0, limit), truncated: true } : { ...file, patch }
    })
  }

  /**
   * Makes `paths` in the workspace what they are in `tree`: written from it, or deleted where it
   * lacks them. Each file is replaced whole; a crash in between is finished by the journal
   * (checkpoints.ts), which runs this again.
   */
  async restore(tree: string, paths: string[]): Promise<void> {
    if (paths.length === 0) return
    const env = { ...this.env, GIT_INDEX_FILE: join(this.options.dir, 'restore-index') }
    const run = (args: string[]) => git(args, { cwd: this.top, env, timeoutMs: this.options.timeoutMs })
    await run(['read-tree', tree])
    const inTree = new Set<string>()
    for (const batch of batches(paths)) for (const p of (await run(['ls-files', '-z', '--', ...batch])).split('\0')) if (p) inTree.add(p)
    const gone = paths.filter((p) => !inTree.has(p))
    for (const path of gone) {
      await unlink(join(this.top, path)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error
      })
    }
    await this.#pruneEmpty(gone)
    for (const batch of batches(paths.filter((p) => inTree.has(p)))) await run(['checkout-index', '-f', '--', ...batch])
    await unlink(env.GIT_INDEX_FILE).catch(() => undefined)
  }

  /** The folders deleted files leave empty go too (up to the top), deepest first. */
  async #pruneEmpty(deleted: string[]): Promise<void> {
    const dirs = new Set<string>()
    for (const path of deleted) for (let d = dirname(path); d !== '.' && d !== ''; d = dirname(d)) dirs.add(d)
    for (const dir of [...dirs].sort((a, b) => b.length - a.length)) await rmdir(join(this.top, dir)).catch(() => undefined)
  }
}

/** Paths in groups small enough for one command line. */
function* batches(paths: string[], size = 500): Generator<string[]> {
  for (let i = 0; i < paths.length; i += size) yield paths.slice(i, i + size)
}

function statusOf(letter: string): FileStatus {
  if (letter.startsWith('A')) return 'added'
  if (letter.startsWith('D')) return 'deleted'
  return 'modified'
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  )
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  )
}

/** git's empty tree: the state before anything was tracked. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'
