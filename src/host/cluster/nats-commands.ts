/**
 * The command bus on NATS (port.ts's CommandBus): request/reply on `cmd.<token>`, where "no
 * responders" means no owner. A message has a size limit (the server's `max_payload`, 1 MB by
 * default) that a prompt's images easily pass (up to 4 × 5 MB): a request larger than it travels
 * by the shared data dir — its body is written to `<spill dir>/<uuid>` on the mount every node shares,
 * the message names the file, the owner reads it, and the sender removes it once the answer is in.
 */
import { randomUUID } from 'node:crypto'
import { readFile, rm, writeFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { NatsConnection, Subscription } from '@nats-io/transport-node'
import { json, parse, type Link } from './nats-link.js'
import { tokenOf, type CommandBus, type CommandReply, type CommandRequest } from './port.js'

/** A request as it travels: its body inline, or in a file of the spill dir (`spilled`, the file's name). */
type Message = CommandRequest & { spilled?: string }

/** Room left in a message for what is not the body (method, URL, headers, the JSON around them). */
const ENVELOPE_BYTES = 16 * 1024

export function commandsOn(nc: NatsConnection, link: Link, spillDir?: string): CommandBus {
  const subject = (threadId: string) => `cmd.${tokenOf(threadId)}`
  const reply = (status: number, error: string): CommandReply => ({ status, headers: { 'content-type': 'application/json; charset=utf-8' }, body: json({ error }) })

  /** The request as the owner's handler gets it: its body read back when it was spilled. */
  const received = async (message: Message): Promise<CommandRequest> => {
    if (message.spilled === undefined) return message
    const { spilled, ...request } = message
    return { ...request, body: await readFile(join(spillDir ?? '', spilled), 'utf8') }
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
              (failure: unknown) => ({ ...reply(503, `the request's body could not be read on the thread's owner (${String(failure)}); retry`), headers: { 'retry-after': '1' } }),
            )
            .then(answer, (failure: unknown) => answer(reply(500, String(failure))))
        },
      })
      // The subscription reaches the server asynchronously: until it has, a request finds no responders.
      // A connection that drops meanwhile sends it again on reconnecting: the stop must be returned anyway.
      await nc.flush().catch(() => {})
      return () => sub.unsubscribe()
    },

    async send(threadId, request, timeoutMs) {
      let data = json(request)
      let spilled: string | undefined
      const limit = (nc.info?.max_payload ?? 1024 * 1024) - ENVELOPE_BYTES
      if (Buffer.byteLength(data) > limit) {
        if (spillDir === undefined || request.body === undefined) return reply(413, `the request is too large to pass to the thread's owner (the engine takes ${limit} bytes)`)
        spilled = `${randomUUID()}.body`
        await mkdir(spillDir, { recursive: true })
        await writeFile(join(spillDir, spilled), request.body)
        data = json({ ...request, body: undefined, spilled } satisfies Message)
      }
      try {
        const answer = await link.call(() => nc.request(subject(threadId), data, { timeout: timeoutMs }))
        return parse<CommandReply>(answer.data)
      } catch (error) {
        const e = error as { isNoResponders?: () => boolean; name?: string; message?: string }
        if (e.isNoResponders?.() || /no responders/i.test(e.message ?? '')) return 'no-owner'
        return 'timeout'
      } finally {
        if (spilled !== undefined) await rm(join(spillDir!, spilled), { force: true }).catch(() => {})
      }
    },
  }
}
