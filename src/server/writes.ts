/**
 * What a request that changes something goes through before its handler runs:
 *
 * - **Idempotency** (`Idempotency-Key` on create, prompt, abort and dialog): the first answer to a
 *   key is recorded in the store (so it outlives a restart) before it is sent; a repeat with the same
 *   key and the same request within 24 h gets that answer back — status and body, with
 *   `Idempotent-Replayed: true` — and nothing runs again. The same key with another request is a
 *   `422`. A repeat that arrives while the first is still running waits for its answer: concurrent
 *   repeats never run twice. A 5xx (nothing was done, or it failed) is not recorded: a retry runs.
 * - **Durability**: a request whose effects could not be written (disk full, read-only data dir)
 *   is refused before anything runs — `507` for a full disk, `503` for a read-only one — while
 *   reads and follows go on. `GET /api/health` says which (`ok` or `degraded` with the reason).
 */
import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ClusterKeys } from '../host/cluster/cluster-keys.js'
import type { KeyedAdmission } from '../host/cluster/mirror-state.js'
import { IDEMPOTENCY_TTL_MS, writeFault, type IdempotencyClaim, type IdempotentAnswer, type ThreadStore, type WriteFault } from '../host/store/port.js'
import { answerOf, guardOutcomes, promptOutcomes } from '../schemas/outcomes.js'
import { replyWith } from './responses.js'

/** Visible ASCII, no comma (two `Idempotency-Key` headers arrive joined by `, ` and are refused), at most 255. */
const KEY = /^[\x21-\x2b\x2d-\x7e]{1,255}$/
export const IDEMPOTENCY_HEADER = 'idempotency-key'

/** The request's `Idempotency-Key`, if it has one the write guard takes (one header, well formed). */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const key = request.headers[IDEMPOTENCY_HEADER]
  return typeof key === 'string' && KEY.test(key) ? key : undefined
}


/** `507` for a full disk, `503` for a read-only one: the request was refused and nothing was done. */
export function refuseWrite(reply: FastifyReply, found: WriteFault): FastifyReply {
  return replyWith(reply, guardOutcomes, { kind: 'not-durable', fault: found }, undefined)
}

interface Claim extends IdempotencyClaim {
  resolve: (answer: IdempotentAnswer | undefined) => void
  /** Cluster mode: the key's claim in the engine, recorded (or released) with the answer. */
  shared?: number
}

export interface WriteGuards {
  /** preHandler: replays or claims an `Idempotency-Key`. */
  idempotent: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>
  /**
   * The `Idempotency-Key` this request claimed (none without one, or once answered): a route passes
   * it to the host, so a prompt's admission claims the key in the same commit that journals it.
   */
  claimOf: (request: FastifyRequest) => IdempotencyClaim | undefined
  /** preHandler: refuses the request when the store cannot write now. */
  durable: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>
  /** `ok`, or `degraded` and why. */
  health: () => { status: 'ok' } | { status: 'degraded'; reason: string; fault: 'disk-full' | 'read-only' }
}

/**
 * `shared`: cluster mode's keys (src/host/cluster/cluster-keys.ts). A key this process does not know
 * is then claimed in the engine before the request runs, and its answer recorded there before it is
 * sent, so a repeat on any node — or on this thread's next owner — gets it back.
 */
export function installWriteGuards(app: FastifyInstance, store: () => ThreadStore, shared?: ClusterKeys): WriteGuards {
  /** `answer` resolves undefined when the claim ran nothing here (answered by another node): the repeat looks again. */
  const inflight = new Map<string, { fingerprint: string; answer: Promise<IdempotentAnswer | undefined> }>()
  /** Answers the store could not record (a write failed after the request ran): still replayed by this process. */
  const unrecorded = new Map<string, IdempotentAnswer>()
  const claims = new WeakMap<FastifyRequest, Claim>()

  const fault = (): WriteFault | undefined => {
    try {
      store().checkWritable()
      return undefined
    } catch (error) {
      return writeFault(error) ?? { kind: 'read-only', code: 'EIO', message: error instanceof Error ? error.message : String(error) }
    }
  }

  const settle = (request: FastifyRequest, status: number, payload: unknown) => {
    const claim = claims.get(request)
    if (!claim) return
    claims.delete(request)
    const answer: IdempotentAnswer = {
      key: claim.key,
      fingerprint: claim.fingerprint,
      status,
      body: typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : '',
      at: Date.now(),
    }
    if (status < 500) {
      try {
        store().recordIdempotent(answer, answer.at - IDEMPOTENCY_TTL_MS)
      } catch (error) {
        request.log.error({ err: error }, 'idempotency: the answer could not be recorded; this process still replays it')
        for (const [key, old] of unrecorded) if (old.at < answer.at - IDEMPOTENCY_TTL_MS) unrecorded.delete(key)
        unrecorded.set(answer.key, answer)
      }
    }
    const revision = claim.shared
    // An answer the thread's log holds already leaves without waiting for the engine's keys (a failure
    // there is logged and retried), and ahead of their record on the connection: written once it is sent.
    const inLog = revision !== undefined && shared!.answeredInLog(`${request.method} ${request.routeOptions.url}`, status)
    if (inLog) setImmediate(() => void shareAnswer(request, revision, answer))
    const recorded = revision === undefined || inLog ? undefined : shareAnswer(request, revision, answer)
    const done = () => {
      inflight.delete(claim.key)
      claim.resolve(answer)
    }
    if (!recorded) return done()
    return recorded.then(done)
  }

  /**
   * Cluster mode: the key's claimer died before recording its answer, and the thread's log shows the
   * prompt it admitted under the key — the retry gets that prompt's receipt, recorded here before it
   * is sent and in the engine after; nothing runs again (the prompt's fate is on the thread's feed).
   */
  const fromLog = (request: FastifyRequest, claim: { key: string; fingerprint: string }, threadId: string, outcome: { revision: number; admission: KeyedAdmission }) => {
    const answer = receiptOf({ ...claim, at: Date.now() }, threadId, outcome.admission)
    try {
      store().recordIdempotent(answer, answer.at - IDEMPOTENCY_TTL_MS)
    } catch {
      unrecorded.set(answer.key, answer)
    }
    // The answer is the log's: the engine's keys get it after it is sent.
    void shareAnswer(request, outcome.revision, answer)
    return answer
  }
  const shareAnswer = (request: FastifyRequest, revision: number, answer: IdempotentAnswer) =>
    shared!.settle(revision, answer).catch((error: unknown) => request.log.error({ err: error }, 'idempotency: the answer could not be recorded in the cluster'))

  // Recorded before the bytes leave: any answer a client saw is the one every repeat gets.
  app.addHook('onSend', async (request, reply, payload) => {
    const recording = settle(request, reply.statusCode, payload)
    if (recording) await recording
    return payload
  })
  // A claim never sent (the socket went away first) must not leave its repeats waiting.
  app.addHook('onResponse', async (request, reply) => settle(request, reply.statusCode, ''))

  /**
   * The answer to a key claimed with a prompt's admission whose own answer was never recorded (the
   * process died in between): the prompt's receipt, from the journal — it was admitted, so the retry
   * gets the 202 the first request would have got, and its fate is on the thread's feed. Recorded, so
   * later repeats read it directly.
   */
  const fromJournal = (known: IdempotentAnswer, ref: { threadId: string; messageId: string }): IdempotentAnswer => {
    const prompt = store()
      .journal(ref.threadId)
      .prompts.find((p) => p.messageId === ref.messageId)
    const answer = receiptOf(known, ref.threadId, prompt && { messageId: ref.messageId, run: prompt.run, queued: prompt.queued })
    try {
      store().recordIdempotent(answer, Date.now() - IDEMPOTENCY_TTL_MS)
    } catch {
      // the claim stays; the next repeat builds the same answer again
    }
    return answer
  }

  const replay = (reply: FastifyReply, answer: IdempotentAnswer) => {
    reply.code(answer.status).header('idempotent-replayed', 'true')
    if (!answer.body) return reply.send()
    return reply.type('application/json; charset=utf-8').send(answer.body)
  }
  const mismatch = (reply: FastifyReply) => replyWith(reply, guardOutcomes, { kind: 'idempotency-key-reused' }, undefined)

  const guards: WriteGuards = {
    async idempotent(request, reply) {
      const raw = request.headers[IDEMPOTENCY_HEADER]
      if (raw === undefined) return
      const key = Array.isArray(raw) ? raw.join(', ') : raw
      if (!KEY.test(key)) {
        return replyWith(reply, guardOutcomes, { kind: 'bad-request', message: 'Idempotency-Key takes 1 to 255 visible ASCII characters, no comma, once' }, undefined)
      }
      const fingerprint = fingerprintOf(request)
      const pending = inflight.get(key)
      if (pending) {
        if (pending.fingerprint !== fingerprint) return mismatch(reply)
        const answered = await pending.answer
        return answered ? replay(reply, answered) : guards.idempotent(request, reply)
      }
      const since = Date.now() - IDEMPOTENCY_TTL_MS
      const kept = unrecorded.get(key)
      const known = store().idempotent(key, since) ?? (kept && kept.at >= since ? kept : undefined)
      if (known) return known.fingerprint === fingerprint ? replay(reply, known.pending ? fromJournal(known, known.pending) : known) : mismatch(reply)
      let resolve!: (answer: IdempotentAnswer | undefined) => void
      const answer = new Promise<IdempotentAnswer | undefined>((r) => (resolve = r))
      inflight.set(key, { fingerprint, answer })
      if (!shared) return void claims.set(request, { key, fingerprint, resolve })
      const threadId = (request.params as { id?: string } | undefined)?.id
      const outcome = await shared.claim(key, fingerprint, threadId).catch((error: unknown) => {
        request.log.error({ err: error }, 'idempotency: the key could not be claimed in the cluster')
        return { kind: 'busy' } as const
      })
      if (outcome.kind === 'run') return void claims.set(request, { key, fingerprint, resolve, shared: outcome.revision })
      if (outcome.kind === 'admitted') {
        const answer = fromLog(request, { key, fingerprint }, threadId!, outcome)
        inflight.delete(key)
        resolve(answer)
        return replay(reply, answer)
      }
      inflight.delete(key)
      resolve(undefined)
      if (outcome.kind === 'busy') {
        return replyWith(reply.header('retry-after', '1'), guardOutcomes, { kind: 'key-running' }, undefined)
      }
      return outcome.answer.fingerprint === fingerprint ? replay(reply, outcome.answer) : mismatch(reply)
    },

    claimOf(request) {
      const claim = claims.get(request)
      return claim && { key: claim.key, fingerprint: claim.fingerprint }
    },

    async durable(request, reply) {
      const found = fault()
      if (!found) return
      request.log.warn({ code: found.code }, `write refused: ${found.message}`)
      return refuseWrite(reply, found)
    },

    health() {
      const found = fault()
      if (!found) return { status: 'ok' }
      return found.kind === 'full'
        ? { status: 'degraded', fault: 'disk-full', reason: `the data dir is full: requests that write are refused (${found.message})` }
        : { status: 'degraded', fault: 'read-only', reason: `the data dir is read-only: requests that write are refused (${found.message})` }
    },
  }
  return guards
}

/**
 * The answer to a keyed prompt that was admitted but whose own answer was never recorded: its
 * receipt (the 202 the first request got or would have got), or, with no such prompt left, that the
 * thread was deleted since.
 */
function receiptOf(known: Pick<IdempotentAnswer, 'key' | 'fingerprint' | 'at'>, threadId: string, prompt: { messageId: string; run: number; queued: boolean } | undefined): IdempotentAnswer {
  const context = { threadId }
  const { status, body } = prompt
    ? answerOf(promptOutcomes, { kind: 'admitted', ...prompt }, context)
    : answerOf(promptOutcomes, { kind: 'rejected', reason: 'deleted' }, context)
  // Accepted, so it may have run: the table's "not run" would say too much.
  const said = prompt ? body : { ...(body as object), error: `the prompt was accepted, but thread ${threadId} has since been deleted` }
  return { key: known.key, fingerprint: known.fingerprint, status, body: JSON.stringify(said), at: known.at }
}

/** The request a key stands for: method, route, params and body (keys sorted). */
export function fingerprintOf(request: FastifyRequest): string {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : value && typeof value === 'object'
        ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical((value as Record<string, unknown>)[k])]))
        : value
  const text = JSON.stringify([request.method, request.routeOptions.url, canonical(request.params), canonical(request.body ?? null)])
  return createHash('sha256').update(text).digest('base64url')
}
