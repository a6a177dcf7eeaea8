/** Small files written whole and durably: written beside, flushed, then put in place, the folder flushed. */
import { randomUUID } from 'node:crypto'
import { closeSync, fsyncSync, linkSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'

/** Written beside `file` under a name no other process picks (PIDs repeat across PID namespaces and hosts sharing a data dir). */
function writeBeside(file: string, text: string): string {
  const temporary = `${file}.${randomUUID()}.tmp`
  const fd = openSync(temporary, 'wx', 0o600)
  try {
    writeSync(fd, text)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  return temporary
}

function flushFolder(file: string): void {
  const folder = openSync(dirname(file), 'r')
  try {
    fsyncSync(folder)
  } finally {
    closeSync(folder)
  }
}

/** `file` replaced whole by `text`. */
export function writeDurably(file: string, text: string): void {
  renameSync(writeBeside(file, text), file)
  flushFolder(file)
}

/** `file` removed, the folder flushed; whether it was there. */
export function removeDurably(file: string): boolean {
  try {
    unlinkSync(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
  flushFolder(file)
  return true
}

/**
 * `file` made with `text` unless it exists: the first of several processes to get there wins and the
 * others keep its content (a link never replaces a file). Returns whether this call made it.
 */
export function createDurably(file: string, text: string): boolean {
  const temporary = writeBeside(file, text)
  try {
    linkSync(temporary, file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  } finally {
    unlinkSync(temporary)
  }
  flushFolder(file)
  return true
}
