/**
 * Running git for the checkpoints: one child process per command, bounded in time and output, with
 * the environment that points it at the thread's own index and object store (shadow.ts).
 */
import { execFile } from 'node:child_process'
import { resolve } from 'node:path'

export class GitFailed extends Error {
  constructor(
    readonly args: string[],
    message: string,
    readonly timedOut = false,
  ) {
    super(`git ${args[0]}: ${message}`)
    this.name = 'GitFailed'
  }
}

export interface GitOptions {
  cwd: string
  env: Record<string, string>
  /** Killed past this; the checkpoint that asked is then given up (see checkpoints.ts). */
  timeoutMs?: number
  maxBytes?: number
}

/** The environment git runs in: the caller's, minus anything that would point it at another repository. */
function baseEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env }
  for (const name of Object.keys(env)) if (name.startsWith('GIT_')) delete env[name]
  return { ...env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' }
}

export function git(args: string[], options: GitOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      // No pager, no hooks' editor, no user-level quirks that change the output we parse.
      ['-c', 'core.quotePath=false', '-c', 'diff.noprefix=false', '-c', 'core.autocrlf=false', ...args],
      {
        cwd: options.cwd,
        env: { ...baseEnv(), ...options.env },
        timeout: options.timeoutMs ?? 60_000,
        maxBuffer: options.maxBytes ?? 64 * 1024 * 1024,
        encoding: 'utf8',
        killSignal: 'SIGKILL',
      },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout)
        const timedOut = (error as { killed?: boolean }).killed === true
        reject(new GitFailed(args, timedOut ? 'took too long' : (stderr || error.message).trim(), timedOut))
      },
    )
  })
}

/** The repository `dir` is in, as git sees it: its top, its git dir and the object store it shares; none outside git. */
export async function findRepository(dir: string): Promise<{ top: string; gitDir: string; objects: string } | undefined> {
  try {
    const out = await git(['rev-parse', '--show-toplevel', '--absolute-git-dir', '--git-common-dir'], { cwd: dir, env: {}, timeoutMs: 10_000 })
    const [top, gitDir, common] = out.trim().split('\n')
    if (!top || !gitDir || !common) return undefined
    return { top, gitDir, objects: resolve(dir, common, 'objects') }
  } catch {
    return undefined
  }
}
