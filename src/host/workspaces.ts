/**
 * Workspaces: the directories a thread may work in. Each thread's `cwd` is fixed at creation and
 * must lie inside one of the allowed roots (`--workspace`, repeatable), after symlinks are resolved,
 * so a link inside a root cannot lead a thread outside it.
 */
import { realpathSync, statSync } from 'node:fs'
import { isAbsolute, resolve } from 'node:path'
import { inside } from '../runtime/paths.js'

export type WorkspaceCheck = { ok: true; cwd: string } | { ok: false; reason: string }

export class Workspaces {
  readonly roots: string[]

  /** Roots that do not exist are a configuration error, reported by the caller at start. */
  constructor(roots: string[]) {
    if (roots.length === 0) throw new Error('at least one workspace root is needed')
    this.roots = roots.map((root) => realpathSync(resolve(root)))
  }

  get default(): string {
    return this.roots[0]
  }

  /** A relative `cwd` is taken from the first root. */
  check(cwd: string | undefined): WorkspaceCheck {
    if (cwd === undefined) return { ok: true, cwd: this.default }
    const wanted = isAbsolute(cwd) ? cwd : resolve(this.default, cwd)
    let real: string
    try {
      real = realpathSync(wanted)
    } catch {
      return { ok: false, reason: `the workspace '${cwd}' does not exist` }
    }
    if (!statSync(real).isDirectory()) return { ok: false, reason: `the workspace '${cwd}' is not a directory` }
    if (!this.roots.some((root) => inside(root, real))) {
      return { ok: false, reason: `the workspace '${cwd}' is outside the allowed roots (${this.roots.join(', ')})` }
    }
    return { ok: true, cwd: real }
  }
}
