/**
 * The connection to NATS as the adapters of nats.ts use it: whether it is up (a request made while it
 * is down fails at once with `EngineAway`), the JSON every record and message is written in, and how a
 * refused compare-and-set looks.
 */
import { readFileSync } from 'node:fs'
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream'
import { credsAuthenticator, nkeyAuthenticator, type NatsConnection, type NodeConnectionOptions } from '@nats-io/transport-node'
import { EngineAway } from './port.js'

/**
 * How a node reaches NATS (`--cluster` and the NATS tools' own environment variables: config.ts). The
 * servers are a seed list: the client learns the rest of a NATS cluster from the first it reaches, and
 * moves to them when that one goes. `tls`: TLS is required (a server that does not offer it is refused),
 * with these files when given, else Node's own CAs. `auth`: at most one way to sign in.
 */
export interface NatsAccess {
  servers: string[]
  tls?: { caFile?: string; certFile?: string; keyFile?: string }
  auth?: { user: string; pass: string } | { token: string } | { credsFile: string } | { nkeyFile: string }
}

/**
 * What nats.js connects with for `access`. The credential files are read at each connection (a rotated
 * creds file is the one the next reconnection signs in with), as nats.js reads the TLS files.
 */
export function connectionOptions(access: NatsAccess): NodeConnectionOptions {
  const { auth, tls } = access
  const options: NodeConnectionOptions = { servers: access.servers, ...(tls ? { tls } : {}) }
  if (auth === undefined) return options
  if ('user' in auth) return { ...options, user: auth.user, pass: auth.pass }
  if ('token' in auth) return { ...options, token: auth.token }
  // nats.js finds the JWT and the seed in a creds file itself.
  if ('credsFile' in auth) return { ...options, authenticator: credsAuthenticator(() => readFileSync(auth.credsFile)) }
  return { ...options, authenticator: nkeyAuthenticator(() => seedIn(readFileSync(auth.nkeyFile, 'utf8'))) }
}

/** The seed in an nkey file: alone, or among the lines `nsc` decorates it with. */
function seedIn(text: string): Uint8Array {
  const seed = text.split('\n').map((line) => line.trim()).find((line) => /^S[A-Z][A-Z2-7]{40,}$/.test(line))
  if (seed === undefined) throw new Error('the nkey file holds no seed')
  return new TextEncoder().encode(seed)
}

/**
 * JetStream's "wrong last sequence": a compare-and-set (or a conditional append) refused. A server
 * answers 10071 (with the subject's last sequence) when it checked the store, and a clustered one (2.11
 * on) 10164 (without it) when another conditional write of the same subject was still on its way — a
 * race taken as lost, the safe side: the writer stops, or the node asks again later. Any other code (a
 * duplicate still on its way, a stream not ready) says nothing of who writes the subject.
 */
const WRONG_LAST_SEQUENCE: ReadonlySet<number> = new Set([JetStreamApiCodes.StreamWrongLastSequence, JetStreamApiCodes.StreamWrongLastSequenceUnknown])
export const refused = (error: unknown) => error instanceof JetStreamApiError && WRONG_LAST_SEQUENCE.has(error.code)
/** How long a failed read or write waits before it is tried again. */
export const RETRY_MS = 100
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export const json = (value: unknown) => JSON.stringify(value)
const utf8 = new TextDecoder()
export const parse = <T>(bytes: Uint8Array): T => JSON.parse(utf8.decode(bytes)) as T

/** Whether the connection to the engine is up; requests made through it fail at once when it is not. */
export class Link {
  #up = true
  #closed = false
  readonly #inFlight = new Set<(error: Error) => void>()
  readonly #reconnected = new Set<() => void>()

  /** `onError`: what the server or the client said went wrong (a sign-in refused, a permission denied). */
  constructor(nc: NatsConnection, onError?: (error: Error) => void) {
    void (async () => {
      for await (const status of nc.status()) {
        if (status.type === 'error') onError?.(status.error)
        if (status.type === 'disconnect' || status.type === 'close') {
          this.#up = false
          if (status.type === 'close') this.#closed = true
          for (const fail of [...this.#inFlight]) fail(new EngineAway(`the connection to the engine dropped (${status.type})`))
        } else if (status.type === 'reconnect') {
          this.#up = true
          for (const listener of [...this.#reconnected]) listener()
        }
      }
    })()
  }

  /** Calls `listener` after each reconnection, until the returned function is called. */
  onReconnect(listener: () => void): () => void {
    this.#reconnected.add(listener)
    return () => void this.#reconnected.delete(listener)
  }

  /** Closed for good (the node left): nothing is retried any more. */
  get closed(): boolean {
    return this.#closed
  }

  /** The request's answer; `EngineAway` at once while the connection is down, or when it drops before the answer. */
  call<T>(request: () => Promise<T>): Promise<T> {
    if (!this.#up) return Promise.reject(new EngineAway())
    return new Promise<T>((resolve, reject) => {
      this.#inFlight.add(reject)
      Promise.resolve()
        .then(request)
        .then(resolve, reject)
        .finally(() => this.#inFlight.delete(reject))
    })
  }
}
