/**
 * How the host asks its process to stop on its own (a cluster node that may not serve on): the entry
 * point (main.ts) stops as for SIGTERM — the drain, the way out — and then exits with the code asked
 * for. Without a listener (a host in a test's process) the request is only logged by its caller.
 */
let listener: ((code: number, reason: string) => void) | undefined

/** main.ts: what a request does. */
export function onStopRequest(handle: (code: number, reason: string) => void): void {
  listener = handle
}

export function requestStop(code: number, reason: string): void {
  listener?.(code, reason)
}
