/**
 * Why threadhost cannot listen where it was asked to, said as the person can act on it. One place
 * for these lines: the early probe (main.ts, before anything heavy loads) and the real listen
 * (serve.ts, which can still lose a race for the port) say the same thing.
 */
import { createServer } from 'node:net'

export interface Where {
  port: number
  host: string
}

/** The one line for a listen that failed with `error`, or undefined when it is no address problem. */
export function listenProblem({ port, host }: Where, error: unknown): string | undefined {
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case 'EADDRINUSE':
      return `threadhost: port ${port} is in use on ${host} (another threadhost?); stop it or choose another with --port`
    case 'EACCES':
      return `threadhost: not permitted to listen on ${host}:${port}; choose another port with --port`
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return `threadhost: --host ${host} is not an address of this machine`
    default:
      return undefined
  }
}

/**
 * Listens on the port for a moment and lets go: a taken port is known in milliseconds, before pi and
 * the host load (a second or more). Port 0 always has a free port. Resolves with the problem's line,
 * or undefined when the port was free a moment ago (the real listen still answers for itself).
 */
export function probePort(where: Where): Promise<string | undefined> {
  if (where.port === 0) return Promise.resolve(undefined)
  return new Promise((resolve) => {
    const probe = createServer()
    probe.once('error', (error) => resolve(listenProblem(where, error)))
    probe.listen({ port: where.port, host: where.host, exclusive: true }, () => probe.close(() => resolve(undefined)))
  })
}
