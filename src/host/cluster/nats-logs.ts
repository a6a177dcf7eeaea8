/**
 * The thread logs of port.ts on NATS JetStream: one subject of the `THREADS` stream per thread, every
 * append conditional on the subject's last sequence (its position), read by an ordered consumer from a
 * position on; its checkpoints: nats-checkpoints.ts.
 */
import { DeliverPolicy, PubHeaders, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import type { Log } from '../store/journal.js'
import { checkpointsOn } from './nats-checkpoints.js'
import { json, Link, parse, refused, RETRY_MS, sleep } from './nats-link.js'
import { EngineAway, Fenced, tokenOf, type ThreadLogs, type ThreadRecord } from './port.js'

const STREAM = 'THREADS'
/** How long an append waits for the engine's answer before it is tried again. */
const APPEND_TIMEOUT_MS = 2000

export async function logsOn(nc: NatsConnection, js: JetStreamClient, jsm: JetStreamManager, link: Link, log?: Log): Promise<ThreadLogs> {
  try {
    await jsm.streams.info(STREAM)
  } catch {
    await jsm.streams.add({ name: STREAM, subjects: ['th.>'], allow_direct: true }).catch(async (error: unknown) => {
      // Another node made it first.
      if (!(await jsm.streams.info(STREAM).catch(() => undefined))) throw error
    })
  }
  const checkpoints = await checkpointsOn(nc, link, log)
  const subject = (threadId: string) => `th.${tokenOf(threadId)}`
  const last = async (threadId: string) => (await link.call(() => jsm.direct.getMessage(STREAM, { last_by_subj: subject(threadId) })))?.seq ?? 0
  return {
    last,
    async append(threadId, record, expected, id) {
      try {
        // The stream's duplicate window (2 min) answers a retried id with the first one's position.
        const options = { expect: { lastSubjectSequence: expected }, timeout: APPEND_TIMEOUT_MS, ...(id !== undefined ? { msgID: id } : {}) }
        const ack = await link.call(() => js.publish(subject(threadId), json(record), options))
        return ack.seq
      } catch (error) {
        if (refused(error)) throw new Fenced(threadId, (error as Error).message)
        throw error
      }
    },
    read(threadId, onRecord, caughtUp, after = 0) {
      let stopped = false
      let consuming: { stop(): void } | undefined
      let next = after + 1
      let reported = false
      const report = () => {
        if (!reported) (reported = true), caughtUp()
      }
      // After the engine restarted, a consumer of the old connection can stall part way (measured: the
      // reader stopped a few records in while the log went on): each reconnection starts a new one at the next record.
      const unhook = link.onReconnect(() => consuming?.stop())
      void (async () => {
        // A consumer that could not start, or ended unasked, starts again at the next record.
        while (!stopped) {
          try {
            const end = await last(threadId)
            if (end < next) report()
            const from = next === 1 ? { deliver_policy: DeliverPolicy.All } : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: next }
            const consumer = await link.call(() => js.consumers.get(STREAM, { filter_subjects: subject(threadId), ...from }))
            const messages = await consumer.consume()
            consuming = { stop: () => void messages.stop() }
            if (stopped) return consuming.stop()
            for await (const m of messages) {
              if (m.seq < next) continue
              next = m.seq + 1
              // Every append names the subject's last sequence it expects: the engine keeps that header.
              const previous = Number(m.headers?.get(PubHeaders.ExpectedLastSubjectSequenceHdr) || Number.NaN)
              onRecord(parse<ThreadRecord>(m.data), m.seq, Number.isInteger(previous) ? previous : undefined)
              if (m.seq >= end) report()
            }
          } catch (error) {
            if (!(error instanceof EngineAway)) log?.('warn', `[${threadId}] cluster: reading the thread's log failed (${String(error)}); reading on from ${next}`)
          }
          if (!stopped) await sleep(RETRY_MS)
        }
      })()
      return {
        stop: () => {
          stopped = true
          unhook()
          consuming?.stop()
        },
      }
    },
    checkpoint: checkpoints.checkpoint,
    async keepCheckpoint(threadId, checkpoint) {
      const through = await checkpoints.keepCheckpoint(threadId, checkpoint)
      if (through === undefined) return
      // The records up to it on the thread's subject alone; one not purged now is by the next checkpoint's.
      await link.call(() => jsm.streams.purge(STREAM, { filter: subject(threadId), seq: through + 1 })).catch((error: unknown) => {
        if (!(error instanceof EngineAway)) log?.('warn', `[${threadId}] cluster: the log was not trimmed up to ${through} (${String(error)}); the next checkpoint trims it`)
      })
    },
    async forget(threadId, before) {
      // The checkpoint first: a log that starts at its `deleted` record has nothing before it left anywhere.
      await checkpoints.forget(threadId, before)
      // The records before `before` on the thread's subject alone; positions after it are kept as they are.
      await link.call(() => jsm.streams.purge(STREAM, { filter: subject(threadId), seq: before }))
    },
  }
}
