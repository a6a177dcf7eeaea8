/**
 * Logging. The server logs structured JSON lines through fastify's logger (pino), one process-wide
 * logger shared by the routes and the host, at `--log-level`. `log()` is the plain console line for
 * the moments before that logger exists (a signal arriving in main.ts); debug there stays quiet
 * unless THREADHOST_DEBUG is set.
 */
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'
import { pino, type Logger } from 'pino'
import type { LoggerLevel } from './config.js'

export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

export function log(level: LogLevel, message: string): void {
  if (level === 'debug' && !process.env.THREADHOST_DEBUG) return
  const line = `${new Date().toISOString()} ${level} ${message}`
  if (level === 'error' || level === 'warn') console.error(line)
  else console.log(line)
}

export function createLogger(level: LoggerLevel): Logger {
  return pino({ level })
}

/** The host's `(level, message)` logging, onto the structured logger. */
export function hostLog(logger: Logger): (level: LogLevel, message: string) => void {
  return (level, message) => logger[level](message)
}

/**
 * One line per request, when its response is done: the route pattern (never the raw URL, which may
 * carry `?token=`), the status and the time taken. Fastify's "incoming request" and "not found"
 * lines are dropped: the one line says both. A follow's line comes only when the server ends its
 * stream (the thread is deleted, the server stops), with how long it lasted; a tab that leaves
 * ends no response, so it gets none.
 */
export class RequestLog extends LogController {
  override incomingRequest(): void {}

  override routeNotFound(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = {
      method: request.method,
      route: request.routeOptions.url ?? '(unmatched)',
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
    }
    if (error) reply.log.error({ ...line, err: error }, 'request errored')
    else reply.log.info(line, 'request')
  }
}
