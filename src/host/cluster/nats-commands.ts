/**
 * The command bus on NATS (port.ts's CommandBus): request/reply on `cmd.<token>`, where "no
 * responders" means no owner. A message has a size limit (the server's `max_payload`, 1 MB by
 * default) that a prompt's images easily pass (up to 4 × 5 MB): a request larger than it travels
 * by the shared data dir — its body is written to `<spill dir>/<uuid>.body` on the mount every node shares,
 * the message names the file, the owner reads it, and the sender removes it once the answer is in.
 */
import { randomUUID } from 'node:crypto'
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { NatsConnection, Subscription } from '@nats-io/transport-node'
import { json, parse, type Link } from './nats-link.js'
import { tokenOf, type CommandBus, type CommandReply, type CommandRequest } from './port.js'

/** A request as it travels: its body inline, or in a file of the spill dir (`spilled`, the file's name). */
type Message = CommandRequest & { spilled?: string }

/** Room left in a message for what is not the body (method, URL, headers, the JSON around them). */
const ENVELOPE_BYTES = 16 * 1024
/** A spill file's name, as a sender makes it: nothing else in a message is read as a path. */
const SPILLED = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.body$/
/** A spill file older than this was left by a sender that died before removing it (it waits 5 s for its answer). */
const STALE_MS = 10 * 60 * 1000

export function commandsOn(nc: NatsConnection, link: Link, spillDir?: string): CommandBus {
  const subject = (threadId: string) => `cmd.${tokenOf(threadId)}`
  const reply = (status: number, error: string): CommandReply => ({ status, headers: { 'content-type': 'application/json; charset=utf-8' }, body: json({ error }) })

  /** The request as the owner's handler gets it: its body read back when it was spilled. */
  const received = async (message: Message): Promise<CommandRequest> => {
    if (message.spilled === undefined) return message
    const { spilled, ...request } = message
    if (spillDir === undefined || !SPILLED.test(spilled)) throw new Error('no such spilled body here')
    return { ...request, body: await readFile(join(spillDir, spilled), 'utf8') }
  }
  /** Spill files a dead sender left behind go, at most once a minute, when another is written. */
  let swept = 0
  const sweep = async (dir: string) => {
    if (Date.now() - swept < 60_000) return
    swept = Date.now()
    for (const name of await readdir(dir).catch(() => [])) {
      const file = join(dir, name)
      const at = (await stat(file).catch(() => undefined))?.mtimeMs
      if (SPILLED.test(name) && at !== undefined && Date.now() - at > STALE_MS) await rm(file, { force: true }).catch(() => {})
    }
  }

  return {
    async serve(threadId, handler) {
      const sub: Subscription = nc.subscribe(subject(threadId), {
        callback: (error, msg) => {
          if (error) return
          let answered = false
          const answer = (answer: CommandReply) => {
            if (answered) return
            answered = true
            try {
              msg.respond(json(answer))
            } catch (error) {
              // Too large for the engine, or the connection went: the sender hears it failed rather than waiting out its timeout.
              try {
                msg.respond(json(reply(500, `the owner's answer could not be sent: ${String(error)}`)))
              } catch {}
            }
          }
          void received(parse<Message>(msg.data))
            .then(
              (request) => handler(request, answer),
              // Its file gone: the sender gave up on it (timed out) and removed it; a retry sends it again.
              () => {
                const refused = reply(503, "the request's body could not be read on the thread's owner; retry")
                return { ...refused, headers: { ...refused.headers, 'retry-after': '1' } }
              },
            )
            .then(answer, (failure: unknown) => answer(reply(500, String(failure))))
        },
      })
      // The subscription reaches the server asynchronously: until it has, a request finds no responders.
      // A connection that drops meanwhile sends it again on reconnecting: the stop must be returned anyway.
      await nc.flush().catch(() => {})
      return () => sub.unsubscribe()
    },

    async serveAll(topic, handler) {
      const sub = nc.subscribe(`all.${topic}`, {
        callback: (error, msg) => {
          if (error) return
          void handler(msg.string()).then(
            (answer) => {
              if (answer === undefined) return
              try {
                msg.respond(answer)
              } catch {}
            },
            () => {},
          )
        },
      })
      await nc.flush().catch(() => {})
      return () => sub.unsubscribe()
    },

    async askAll(topic, body, expected, timeoutMs) {
      const answers: string[] = []
      if (expected <= 0) return answers
      try {
        const replies = await link.call(() => nc.requestMany(`all.${topic}`, body, { strategy: 'count', maxMessages: expected, maxWait: timeoutMs }))
        for await (const reply of replies) answers.push(reply.string())
      } catch {
        // No node answers, or the engine went away meanwhile: the answers that came.
      }
      return answers
    },

    async send(threadId, request, timeoutMs) {
      let data = json(request)
      let spilled: string | undefined
      const limit = (nc.info?.max_payload ?? 1024 * 1024) - ENVELOPE_BYTES
      try {
        if (Buffer.byteLength(data) > limit) {
          if (spillDir === undefined || request.body === undefined) return reply(413, `the request is too large to pass to the thread's owner (the engine takes ${limit} bytes)`)
          void sweep(spillDir)
          spilled = `${randomUUID()}.body`
          await mkdir(spillDir, { recursive: true })
          await writeFile(join(spillDir, spilled), request.body)
          data = json({ ...request, body: undefined, spilled } satisfies Message)
        }
        const answer = await link.call(() => nc.request(subject(threadId), data, { timeout: timeoutMs }))
        return parse<CommandReply>(answer.data)
      } catch (error) {
        const e = error as { isNoResponders?: () => boolean; name?: string; message?: string }
        if (e.isNoResponders?.() || /no responders/i.test(e.message ?? '')) return 'no-owner'
        // Not sent (the spill could not be written, the engine refused it) or not answered in time: the sender retries.
        return 'timeout'
      } finally {
        if (spilled !== undefined) await rm(join(spillDir!, spilled), { force: true }).catch(() => {})
      }
    },
  }
}
