/**
 * What pi's own runtime does before it disposes a session: extensions hear `session_shutdown`
 * (reason `quit`) — an auto-commit, a watcher closed, a child process ended. pi waits for the
 * handlers unbounded; a server's release must not hang on one, so a handler that hangs is left
 * behind after a bound, said in the log, and the release or the server's stop goes on.
 */
import type { AgentSession } from '@earendil-works/pi-coding-agent'
import { errorText, type RuntimeLogger } from './extension-ui.js'

/** How long extensions' `session_shutdown` handlers may take when a runtime is disposed, by default. */
export const SHUTDOWN_HANDLERS_MS = 3000

export async function shutdownExtensions(
  runner: AgentSession['extensionRunner'],
  options: { log: RuntimeLogger; label: string; limitMs?: number },
): Promise<void> {
  if (!runner.hasHandlers('session_shutdown')) return
  const limit = options.limitMs ?? SHUTDOWN_HANDLERS_MS
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), limit)))
  // pi's emit reports a handler's failure to onError itself and resolves.
  const handled = runner.emit({ type: 'session_shutdown', reason: 'quit' }).then(
    () => 'done' as const,
    (error: unknown) => (options.log.error(`session_shutdown failed: ${errorText(error)}`), 'done' as const),
  )
  const outcome = await Promise.race([handled, late])
  clearTimeout(timer)
  if (outcome === 'late') options.log.warn(`${options.label}: extensions' session_shutdown handlers took longer than ${limit} ms; closed without them`)
}
