/**
 * The short way to a thread's owner (docs/flows/cluster.md, "A command passed on"). Every answer a
 * node gets to a command it passed on names the node that ran it: its HTTP address, when it has one
 * the others can reach (`--node-url`, or the one address it listens on), and the pass it takes such
 * commands with (a secret of its own, known only to nodes: the answers of the bus carry it, and a
 * client never sees them). The next command on the thread goes straight there: one HTTP round trip on
 * a kept-alive connection, where the command bus makes two trips through nats-server and an `inject`
 * on the owner (0.34 against 0.61 ms at p50 for the round trips alone, one every 5 ms, on the 2-vCPU VM:
 * docs/benchmarks.md).
 *
 * The owner runs it as any request it gets (its guards, the log's flush before the answer), and its
 * answer names it again. A node that does not own the thread, or whose pass it is not (restarted at
 * that address), answers `421 NOT_OWNER` before anything runs. An address is only ever a hint, so:
 * - a request that never left this node (the owner's port closed or unreachable: it stopped or died),
 *   that the node reached refused (421), or that something other than threadhost answered, goes by
 *   the bus instead;
 * - one that left and got no answer in time is an owner that could not be reached (the bus's 503, with
 *   Retry-After) — it may have run, so it is not sent again.
 * A node that failed a command is forgotten with every thread known at it, and its address is not
 * learned again for 30 s; one that answered 421 only for that thread.
 */
import http from 'node:http'
import https from 'node:https'
import { urlToHttpOptions } from 'node:url'
import type { CommandRequest } from '../host/cluster/port.js'

/** Marks a command another node passed on straight to this one: its value is this node's pass. */
export const PASSED_ON_HEADER = 'x-threadhost-passed-on'
/** A keyed command's digest, as the node that passed it on validated it (`CommandRequest.fingerprint`). */
export const FINGERPRINT_HEADER = 'x-threadhost-fingerprint'
/** On the answer to a command passed on: `<pass> <HTTP address>` of the node that ran it. */
export const RAN_ON_HEADER = 'x-threadhost-ran-on'

/** Threads whose owner is known here, at most: past it, the longest known is forgotten (it goes by the bus once). */
const MAX_KNOWN = 10_000
/** An address that failed a command is not learned again for this long (the bus names it again at once). */
const FAILED_MS = 30_000
/** A connection to an owner not made in this long: it is not reachable (a machine gone), and the bus has the rest of the time. */
const CONNECT_MS = 1000

/** An answer as it came, headers and all (cluster-http.ts keeps the ones a client gets). */
export interface DirectAnswer {
  status: number
  headers: http.IncomingHttpHeaders
  body: string
}

/** A node as its answers name it. */
interface Owner {
  address: string
  pass: string
  options: http.RequestOptions
}

export class OwnerLinks {
  readonly #known = new Map<string, Owner>()
  /** One per address: every thread its node owns shares it. */
  readonly #owners = new Map<string, Owner>()
  /** Addresses that failed a command, until when they are not learned. */
  readonly #failed = new Map<string, number>()
  readonly #agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) }

  /** `own`: this node's address, never learned as another's. */
  constructor(private readonly own: () => string | undefined) {}

  /** What an answer said of the node that ran the thread's command (`<pass> <address>`), or nothing. */
  learn(threadId: string, ranOn: string | undefined): void {
    this.#known.delete(threadId)
    const [pass, address] = ranOn?.split(' ') ?? []
    if (!pass || !address || address === this.own()) return
    const failed = this.#failed.get(address)
    if (failed !== undefined && failed > Date.now()) return
    this.#failed.delete(address)
    let owner = this.#owners.get(address)
    // A node at that address anew (restarted: another pass) replaces the last one.
    if (owner?.pass !== pass) {
      let url: URL
      try {
        url = new URL(address)
      } catch {
        return
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') return
      // urlToHttpOptions: an IPv6 host without its brackets, as http.request takes it.
      const options = { ...urlToHttpOptions(url), agent: url.protocol === 'https:' ? this.#agents.https : this.#agents.http }
      owner = { address, pass, options }
      this.#owners.set(address, owner)
    }
    if (this.#known.size >= MAX_KNOWN) this.#known.delete(this.#known.keys().next().value!)
    this.#known.set(threadId, owner)
  }

  /**
   * The command sent straight to the thread's owner: its answer; `not-sent` when it never left or
   * nothing ran there (send it by the bus); `unavailable` when it left and no answer came in time.
   * Undefined: no owner is known here.
   */
  send(threadId: string, command: CommandRequest, timeoutMs: number): Promise<DirectAnswer | 'not-sent' | 'unavailable'> | undefined {
    const owner = this.#known.get(threadId)
    if (owner === undefined) return undefined
    return new Promise((resolve) => {
      let sent = false
      let over = false
      /** `forget`: the node failed (all its threads go by the bus next), or only this thread is not its. */
      const end = (outcome: DirectAnswer | 'not-sent' | 'unavailable', forget?: 'node' | 'thread') => {
        if (over) return
        over = true
        clearTimeout(timer)
        if (forget === 'node') this.#forget(owner)
        else if (forget === 'thread') this.#known.delete(threadId)
        resolve(outcome)
      }
      const headers: Record<string, string | number> = { ...command.headers, [PASSED_ON_HEADER]: owner.pass }
      if (command.body !== undefined) headers['content-length'] = Buffer.byteLength(command.body)
      if (command.fingerprint !== undefined) headers[FINGERPRINT_HEADER] = command.fingerprint
      const request = (owner.options.protocol === 'https:' ? https : http).request({ ...owner.options, method: command.method, path: command.url, headers }, (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('end', () => {
          // 421: the node does not own the thread (any more), and ran nothing.
          if (response.statusCode === 421) return end('not-sent', 'thread')
          // A node that runs a command sent with its pass names itself with it; any other answer is not
          // threadhost's (a proxy, the port reused), and nothing ran.
          if (!String(response.headers[RAN_ON_HEADER] ?? '').startsWith(`${owner.pass} `)) return end('not-sent', 'node')
          end({ status: response.statusCode ?? 502, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') })
        })
        response.on('error', () => end('unavailable', 'node'))
      })
      request.on('socket', (socket) => {
        if (!socket.connecting) return
        const connecting = setTimeout(() => request.destroy(new Error('no connection in time')), CONNECT_MS)
        socket.once('connect', () => clearTimeout(connecting))
        socket.once('close', () => clearTimeout(connecting))
      })
      // Handed to the socket: from here the owner may have it.
      request.on('finish', () => (sent = true))
      request.on('error', () => end(sent ? 'unavailable' : 'not-sent', 'node'))
      const timer = setTimeout(() => request.destroy(new Error('no answer in time')), timeoutMs)
      request.end(command.body)
    })
  }

  /** Every thread known at a node that failed a command: the next command on each goes by the bus. */
  #forget(owner: Owner): void {
    for (const [threadId, known] of this.#known) if (known === owner) this.#known.delete(threadId)
    if (this.#owners.get(owner.address) === owner) this.#owners.delete(owner.address)
    for (const [address, until] of this.#failed) if (until <= Date.now()) this.#failed.delete(address)
    this.#failed.set(owner.address, Date.now() + FAILED_MS)
  }

  close(): void {
    this.#agents.http.destroy()
    this.#agents.https.destroy()
  }
}
