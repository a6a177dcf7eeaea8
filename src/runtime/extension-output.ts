/**
 * What extensions write to the process's stdout and stderr, kept out of threadhost's own output.
 *
 * pi runs extensions in-process, so an extension's `console.log` or `process.stdout.write` (a
 * terminal notification, a debug line) would land between the server's JSON log lines. pi's RPC
 * mode answers this by moving every stdout write to stderr; a server cannot, its log is on stdout.
 * Instead each thread's work on its pi session runs in an async context that names the thread
 * (`asThread`): everything an extension does from there — event handlers, tools, commands, the
 * timers and callbacks they start — inherits it. While such a context is current, a write to
 * stdout or stderr becomes a log record of that thread (an `info` for stdout, a `warn` for
 * stderr), one per line; any other write goes through untouched. The logger itself runs outside
 * the context, so a logger that writes to stdout is never captured.
 *
 * The logger (pino) writes to the file descriptor directly, not through `process.stdout.write`,
 * so it never passes here either way. What cannot be caught: a native addon or a child process
 * that inherited the server's descriptors writes straight to them.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { RuntimeLogger } from './extension-ui.js'

interface Owner {
  /** How the records name whose work wrote, e.g. `thread t1`. */
  label: string
  log: RuntimeLogger
}

/** A record's text is cut here: a runaway write must not become a runaway log line. */
export const MAX_OUTPUT_LINE = 2000

const owners = new AsyncLocalStorage<Owner>()
const CAPTURING = Symbol.for('threadhost.extension-output')

type Write = NodeJS.WriteStream['write'] & { [CAPTURING]?: true }

/** Runs `work` as this thread's: what it and everything it starts write to stdout/stderr goes to `log`. */
export function asThread<T>(label: string, log: RuntimeLogger, work: () => T): T {
  capture(process.stdout, 'stdout')
  capture(process.stderr, 'stderr')
  return owners.run({ label, log }, work)
}

/**
 * Wraps the stream's write, unless it is wrapped already. Checked on every `asThread`, so whatever
 * replaced the stream's write since (a test's spy, another library) is wrapped in its turn.
 */
function capture(stream: NodeJS.WriteStream, name: 'stdout' | 'stderr'): void {
  const underlying = stream.write as Write
  if (underlying[CAPTURING]) return
  const write = function (this: NodeJS.WriteStream, ...args: Parameters<Write>) {
    const owner = owners.getStore()
    if (!owner) return (underlying as (...a: unknown[]) => boolean).apply(this, args)
    const [chunk, encoding, callback] = args as [unknown, unknown, unknown]
    const text =
      typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString(typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
    owners.exit(() => record(owner, name, text))
    const done = typeof encoding === 'function' ? encoding : callback
    if (typeof done === 'function') process.nextTick(done as () => void)
    return true
  } as Write
  write[CAPTURING] = true
  stream.write = write
}

function record(owner: Owner, name: 'stdout' | 'stderr', text: string): void {
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') continue
    const cut = line.length > MAX_OUTPUT_LINE ? `${line.slice(0, MAX_OUTPUT_LINE)}… (${line.length - MAX_OUTPUT_LINE} more characters)` : line
    const message = `${owner.label}: an extension wrote to ${name}: ${JSON.stringify(cut)}`
    try {
      if (name === 'stderr') owner.log.warn(message)
      else owner.log.info(message)
    } catch {
      // A failing logger must not break the extension that wrote.
    }
  }
}
