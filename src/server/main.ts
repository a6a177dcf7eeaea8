/**
 * threadhost's entry point. The configuration is checked before anything heavy is loaded, so a
 * wrong flag is answered at once; then the host and the server run as Effect layers (serve.ts) that
 * SIGINT/SIGTERM interrupt. The process exits 0 once everything is released (or the code the host
 * asked for when it asked to stop: stop-request.ts), 1 if the way out took longer than its bound, and a
 * start that fails says why in one line and exits 2 (a wrong flag) or 1;
 * a taken port is found before pi loads, so that answer comes at once too.
 */
import { enableCompileCache, setSourceMapsSupport } from 'node:module'
import type { Config } from './config.js'

// Most of a start is node compiling the packages' code (fastify, effect, typebox, then pi's): node
// keeps what it compiled on disk (in the OS temp dir, or $NODE_COMPILE_CACHE) and the next start reads
// it back. First, so that everything after it is imported through the cache (a dynamic import).
enableCompileCache()
// Stack traces name the sources of threadhost's own build (dist/server/*.js.map), not of the packages:
// `--enable-source-maps` also read the maps of every package file loaded (pi ships one per file),
// ≈ 60 ms of CPU before the server listened.
setSourceMapsSupport(true, { nodeModules: false })

async function main(): Promise<void> {
  const [{ ConfigError, parseConfig }, { probePort }] = await Promise.all([import('./config.js'), import('./listen-problem.js')])
  let config: Config
  try {
    config = parseConfig(process.argv.slice(2))
  } catch (error) {
    const message = (error as Error).message
    console.error(message)
    process.exit(error instanceof ConfigError && message.startsWith('threadhost —') ? 0 : 2)
  }
  const taken = await probePort(config)
  if (taken !== undefined) {
    console.error(taken)
    process.exit(1)
  }
  // The logger brings fastify and pino: loaded with the rest, after a wrong flag or a taken port was answered.
  const [{ Cause, Effect, Fiber }, { serve, SHUTDOWN_LIMIT, StartFailed }, { log }, { onStopRequest }] = await Promise.all([
    import('effect'),
    import('./serve.js'),
    import('./log.js'),
    import('./stop-request.js'),
  ])
  const fiber = Effect.runFork(serve(config))
  let stopping = false
  let signalled = false
  // 0 after a signal; the code the host asked for when its request started the stop (stop-request.ts).
  let exitCode = 0
  const stop = (why: string, asked?: number) => {
    if (stopping) {
      // A request during a stop changes nothing; a second signal is the person insisting: go now.
      if (asked !== undefined) return
      if (signalled) {
        log('warn', `${why} received again; exiting without waiting for the shutdown`)
        process.exit(1)
      }
      signalled = true
      return log('info', `${why} received; already stopping`)
    }
    stopping = true
    if (asked === undefined) signalled = true
    else exitCode = asked
    log('info', asked === undefined ? `${why} received` : `stopping: ${why}`)
    void Effect.runPromise(
      Fiber.interrupt(fiber).pipe(
        Effect.timeoutOrElse({
          duration: SHUTDOWN_LIMIT,
          orElse: () => Effect.sync(() => (log('error', `shutdown did not finish within ${SHUTDOWN_LIMIT}; exiting`), process.exit(1))),
        }),
      ),
    ).then(() => process.exit(exitCode))
  }
  process.on('SIGINT', () => stop('SIGINT'))
  process.on('SIGTERM', () => stop('SIGTERM'))
  onStopRequest((code, reason) => stop(reason, code))
  fiber.addObserver((exit) => {
    if (stopping || exit._tag !== 'Failure') return
    const error = Cause.squash(exit.cause)
    if (error instanceof StartFailed) {
      console.error(error.message)
      process.exit(error.exitCode)
    }
    console.error(`threadhost stopped:\n${Cause.pretty(exit.cause)}`)
    process.exit(1)
  })
}

void main()
