/**
 * Paths: which file a tool argument names, and whether it lies inside a directory, judged on the
 * file system as it is — symlinks are resolved as far as they exist, so a link inside a workspace
 * cannot lead a thread (or a tool) outside it. The host checks a thread's cwd against its roots with
 * this; the tool policy checks tool paths against the thread's workspace.
 */
import { lstatSync, readlinkSync, realpathSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

/** Whether `path` (absolute, or relative to `dir`) lies inside `dir` once symlinks on both sides are resolved. */
export function contains(dir: string, path: string): boolean {
  const root = realish(resolve(dir))
  return inside(root, realish(resolve(root, path)))
}

/** A lexical check: both sides must already be resolved. */
export function inside(root: string, path: string): boolean {
  const rel = relative(root, path)
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel))
}

const UNICODE_SPACES = /[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g

/**
 * The absolute path pi's file tools will open for a path argument. Mirrors pi 1.6's `resolveToCwd`
 * (not exported): a leading `@` is dropped, `~` is the home directory and `file://` URLs are paths —
 * judged naively, `~/.ssh/id_rsa` would look like a file inside the workspace.
 */
export function toolPath(raw: string, cwd: string): string {
  let p = raw.replace(UNICODE_SPACES, ' ')
  if (p.startsWith('@')) p = p.slice(1)
  if (p === '~') p = homedir()
  else if (p.startsWith('~/')) p = join(homedir(), p.slice(2))
  else if (p.startsWith('file://')) p = fileURLToPath(p)
  return resolve(cwd, p)
}

/**
 * The other spellings pi's `read` falls back to when a path does not exist (macOS screenshot names:
 * a narrow no-break space before AM/PM, NFD, a curly apostrophe). Each could name a different file,
 * so each must be inside the workspace too.
 */
export function readPathVariants(path: string): string[] {
  const amPm = path.replace(/ (AM|PM)\./gi, '\u202F$1.')
  const nfd = path.normalize('NFD')
  const curly = path.replace(/'/g, '\u2019')
  return [...new Set([path, amPm, nfd, curly, nfd.replace(/'/g, '\u2019')])]
}

/** realpath of the longest existing prefix, with the rest appended: a file about to be written has no realpath yet. */
function realish(path: string, hops = 0): string {
  const rest: string[] = []
  let head = path
  for (;;) {
    try {
      return resolve(realpathSync(head), ...rest.reverse())
    } catch {
      // A dangling symlink has no realpath either, but a write through it lands where it points.
      const target = linkTarget(head)
      if (target !== undefined && hops < 40) return realish(resolve(target, ...rest.reverse()), hops + 1)
      const parent = resolve(head, '..')
      if (parent === head) return path
      rest.push(head.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)))
      head = parent
    }
  }
}

function linkTarget(path: string): string | undefined {
  try {
    return lstatSync(path).isSymbolicLink() ? resolve(dirname(path), readlinkSync(path)) : undefined
  } catch {
    return undefined
  }
}
