/**
 * What became of the user's and the projects' pi extensions, kept where `GET /api/extensions` can
 * read it: what loaded, what failed to load or failed in a handler (`session_start`, …), and the
 * tool-name clashes pi's resource loader found. pi's CLI prints these on its terminal; a server has
 * none, so they are kept here, as the latest session built for each scope (and workspace) saw them.
 *
 * A load replaces what its scope said before: the user's extensions with each session (every one
 * loads them), a project's with each session in that workspace — so a fixed file clears its failure
 * with the next thread built.
 */
import { basename, dirname, isAbsolute, relative } from 'node:path'
import type { ExtensionError, LoadExtensionsResult } from '@earendil-works/pi-coding-agent'
import type { ExtensionClash, ExtensionList, FailedExtension, LoadedExtension } from '../schemas/index.js'

interface ScopeReport {
  loaded: LoadedExtension[]
  failed: FailedExtension[]
  clashes: ExtensionClash[]
}

const empty = (): ScopeReport => ({ loaded: [], failed: [], clashes: [] })

/** pi's resource loader reports a clash as an error of the extension that came second. */
const CLASH = /^(Tool|Flag) "[^"]+" conflicts with /

export class ExtensionStatus {
  #user: ScopeReport = empty()
  readonly #projects = new Map<string, ScopeReport>()

  constructor(private readonly agentDir: string) {}

  /** What pi's resource loader made of a session's extensions (its `getExtensions()`). */
  loaded(cwd: string, result: LoadExtensionsResult): void {
    const user = empty()
    const project = empty()
    const scopeOf = (path: string) => (within(this.agentDir, path) ? user : project)
    const place = (path: string) =>
      within(this.agentDir, path) ? { path, scope: 'user' as const } : { path, scope: 'project' as const, cwd }
    for (const extension of result.extensions) {
      // threadhost's own and pi's built-ins are inline factories, not a user's files.
      if (extension.hidden || !isAbsolute(extension.path)) continue
      scopeOf(extension.path).loaded.push({
        ...place(extension.path),
        name: nameOf(extension.path),
        tools: [...extension.tools.keys()],
        commands: [...extension.commands.keys()],
        shortcuts: [...extension.shortcuts.keys()],
      })
    }
    for (const { path, error } of result.errors) {
      if (CLASH.test(error)) scopeOf(path).clashes.push({ ...place(path), message: error })
      else scopeOf(path).failed.push({ ...place(path), error })
    }
    this.#user = user
    this.#projects.set(cwd, project)
  }

  /** pi's `onError`: an extension's handler threw (`session_start`, a tool call, …). Kept until its scope loads again. */
  failed(cwd: string, threadId: string, error: ExtensionError): void {
    const report = within(this.agentDir, error.extensionPath) ? this.#user : this.#projects.get(cwd)
    if (!report) return
    const scope = report === this.#user ? { scope: 'user' as const } : { scope: 'project' as const, cwd }
    // One entry per extension and event: the latest failure says enough.
    report.failed = report.failed.filter((f) => !(f.path === error.extensionPath && f.event === error.event))
    report.failed.push({ path: error.extensionPath, ...scope, error: error.error, event: error.event, threadId })
  }

  list(): ExtensionList {
    const reports = [this.#user, ...this.#projects.values()]
    return {
      loaded: reports.flatMap((r) => r.loaded),
      failed: reports.flatMap((r) => r.failed),
      clashes: reports.flatMap((r) => r.clashes),
    }
  }
}

function within(dir: string, path: string): boolean {
  const rel = relative(dir, path)
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel)
}

function nameOf(path: string): string {
  const file = basename(path)
  return /^index\.[cm]?[jt]s$/.test(file) ? basename(dirname(path)) : file
}
