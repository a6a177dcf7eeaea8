/**
 * threadhost's entry point. The configuration is checked before anything heavy is loaded, so a
 * wrong flag is answered at once; then the host and the server run as one Effect scope that
 * SIGINT/SIGTERM interrupt, and the process exits 0 once everything is released.
 */
import { ConfigError, parseConfig, type Config } from './config.js'
import { log } from './log.js'

async function main(): Promise<void> {
  let config: Config
  try {
    config = parseConfig(process.argv.slice(2))
  } catch (error) {
    const message = (error as Error).message
    console.error(message)
    process.exit(error instanceof ConfigError && message.startsWith('threadhost —') ? 0 : 2)
  }
  const [{ Cause, Effect, Fiber }, { serve }] = await Promise.all([import('effect'), import('./serve.js')])
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
      // A configuration found wrong only once pi was loaded (an unusable --model) is said like any other.
      const error = Cause.squash(exit.cause)
      if (error instanceof ConfigError) {
        console.error(error.message)
        process.exit(2)
      }
      console.error('threadhost stopped:', exit.cause)
      process.exit(1)
    }
  })
}

void main()
