/**
 * threadhost's entry point: configuration, the host and the HTTP server as scoped resources.
 *
 * Effect holds the lifecycle only. On SIGINT/SIGTERM the scope closes in reverse order: new
 * requests get 503 and every run stops (its queued prompts reported, open dialogs settled
 * `aborted`, followers closed, the index flushed) before the listener closes; then the process exits 0.
 */
import { Effect, Fiber } from 'effect'
import { ThreadRegistry } from '../host/thread-registry.js'
import { createPiRuntimeFactory } from '../runtime/index.js'
import { buildApp } from './app.js'
import { ConfigError, parseConfig, type Config } from './config.js'

const log = (level: 'debug' | 'info' | 'warn' | 'error', message: string) => {
  if (level !== 'debug') console[level === 'info' ? 'log' : level](`${new Date().toISOString()} ${level} ${message}`)
}

const quietLogger = {
  info: (m: string) => log('info', m),
  warn: (m: string) => log('warn', m),
  error: (m: string) => log('error', m),
}

export const serve = (config: Config) =>
  Effect.gen(function* () {
    const registry = yield* Effect.acquireRelease(
      Effect.promise(() =>
        ThreadRegistry.open({
          dataDir: config.dataDir,
          runtimes: createPiRuntimeFactory({ dataDir: config.dataDir, demoDelayMs: config.demoDelayMs, log: quietLogger }),
          defaultModel: config.model,
          idleMs: config.idleMs,
          log,
        }),
      ),
      (registry) => Effect.promise(() => registry.shutdown()),
    )
    const app = yield* Effect.acquireRelease(
      Effect.promise(() => buildApp({ registry, token: config.token, clientDir: config.clientDir })),
      (app) => Effect.promise(() => app.close()),
    )
    const address = yield* Effect.promise(() => app.listen({ port: config.port, host: config.host }))
    // Runs first on the way out: drain the threads while the listener still answers 503.
    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        log('info', 'shutting down: stopping runs and closing followers')
        await registry.shutdown()
      }),
    )
    console.log(`threadhost listening on ${address.replace('[::1]', 'localhost')}`)
    return yield* Effect.never
  }).pipe(Effect.scoped)

function main(): void {
  let config: Config
  try {
    config = parseConfig(process.argv.slice(2))
  } catch (error) {
    if (error instanceof ConfigError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error((error as Error).message)
      process.exit(error instanceof ConfigError && (error as Error).message.startsWith('threadhost —') ? 0 : 2)
    }
    throw error
  }
  const fiber = Effect.runFork(serve(config))
  let stopping = false
  const stop = (signal: string) => {
    if (stopping) return
    stopping = true
    log('info', `${signal} received`)
    void Effect.runPromise(Fiber.interrupt(fiber)).then(
      () => process.exit(0),
      (error) => {
        console.error(error)
        process.exit(1)
      },
    )
  }
  process.once('SIGINT', () => stop('SIGINT'))
  process.once('SIGTERM', () => stop('SIGTERM'))
  fiber.addObserver((exit) => {
    if (!stopping && exit._tag === 'Failure') {
      console.error('threadhost stopped:', exit.cause)
      process.exit(1)
    }
  })
}

main()
