/**
 * The host and the HTTP server as scoped resources. Effect holds the lifecycle only: when the scope
 * closes (SIGINT/SIGTERM) new requests get 503 and every run stops — its queued prompts reported,
 * open dialogs settled `aborted`, followers closed, the index flushed — before the listener closes.
 */
import { Effect } from 'effect'
import { ThreadRegistry } from '../host/thread-registry.js'
import { Workspaces } from '../host/workspaces.js'
import { createPiRuntimeFactory, describeSurvey, PiModels, surveyAgentDir } from '../runtime/index.js'
import { buildApp } from './app.js'
import { debugRoutes } from './debug-routes.js'
import { ConfigError, type Config } from './config.js'
import { createLogger, hostLog, type LogLevel } from './log.js'

/** Stop every thread, but never let a runtime that will not stop keep the process from exiting. */
const drain = (registry: ThreadRegistry, log: (level: LogLevel, message: string) => void) =>
  Effect.sync(() => registry.closing || log('info', 'shutting down: stopping runs and closing followers')).pipe(
    Effect.andThen(Effect.promise(() => registry.shutdown())),
    Effect.timeout(SHUTDOWN_LIMIT),
    Effect.catch(() => Effect.sync(() => log('warn', `threads did not stop within ${SHUTDOWN_LIMIT}; exiting anyway`))),
  )

const SHUTDOWN_LIMIT = '15 seconds'

/** `--model` must be usable (an unusable flag stops the start with pi's reason); without it, pi's own default or demo. */
async function chooseDefaultModel(config: Config, models: PiModels, cwd: string): Promise<string> {
  if (config.model === undefined) return models.piDefault(config.agentDir, cwd)
  const check = await models.check(config.model)
  if (!check.ok) throw new ConfigError(`--model ${config.model}: ${check.reason}`)
  return config.model
}

export const serve = (config: Config) =>
  Effect.gen(function* () {
    // One structured logger for the routes and the host alike.
    const logger = createLogger(config.logLevel)
    const log = hostLog(logger)
    const runtimeLog = {
      info: (m: string) => log('info', m),
      warn: (m: string) => log('warn', m),
      error: (m: string) => log('error', m),
    }
    const workspaces = new Workspaces(config.workspaces)
    const models = yield* Effect.promise(() => PiModels.create({ agentDir: config.agentDir, demoDelayMs: config.demoDelayMs }))
    const defaultModel = yield* Effect.promise(() => chooseDefaultModel(config, models, workspaces.default))
    const registry = yield* Effect.acquireRelease(
      Effect.promise(() =>
        ThreadRegistry.open({
          dataDir: config.dataDir,
          runtimes: createPiRuntimeFactory({
            dataDir: config.dataDir,
            agentDir: config.agentDir,
            models,
            trustProjects: config.trustProjects,
            toolPolicy: config.toolPolicy,
            log: runtimeLog,
          }),
          models,
          workspaces,
          defaultModel,
          idleMs: config.idleMs,
          log,
        }),
      ),
      (registry) => drain(registry, log),
    )
    const survey = yield* Effect.promise(() => surveyAgentDir(config.agentDir, workspaces.default, models))
    console.log(describeSurvey(survey, defaultModel))
    const app = yield* Effect.acquireRelease(
      Effect.promise(() =>
        buildApp({
          registry,
          token: config.token,
          clientDir: config.clientDir,
          loggerInstance: logger,
          processMetrics: true,
          plugins: config.inspector ? [debugRoutes({ registry })] : [],
        }),
      ),
      (app) => Effect.promise(() => app.close()),
    )
    const address = yield* Effect.promise(() => app.listen({ port: config.port, host: config.host }))
    // Runs first on the way out: drain the threads while the listener still answers 503.
    yield* Effect.addFinalizer(() => drain(registry, log))
    const url = address.replace('[::1]', 'localhost')
    if (config.tokenGenerated) {
      // Printed once, here only (never logged): the way in for this run.
      console.log(
        `threadhost: no --token given for --host ${config.host}, so this run uses a generated one: ${config.token}\n` +
          `  open ${url}/?token=${config.token} or send Authorization: Bearer <token>; pass --token to choose your own`,
      )
    }
    console.log(`threadhost listening on ${url}`)
    return yield* Effect.never
  }).pipe(Effect.scoped)
