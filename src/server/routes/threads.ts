/**
 * The thread routes: models, create, fork, list, read, change, delete, the composer's draft and commands.
 * Each asks the registry and replies with the outcome table's answer (src/schemas/outcomes.ts).
 */
import type { ThreadRegistry } from '../../host/thread-registry.js'
import { createOutcomes, deleteOutcomes, forkOutcomes, lookupOutcomes, shortcutOutcomes, updateOutcomes, versionOutcomes, worktreeOutcomes } from '../../schemas/outcomes.js'
import { replyWith } from '../responses.js'
import type { RouteHandlers } from './register.js'

const tags = ['threads']

export function threadRoutes(registry: ThreadRegistry): RouteHandlers {
  return {
    listModels: { tags, summary: 'The models a thread can run on', handler: async () => registry.models() },

    createThread: {
      tags,
      summary: 'Create a thread (the body is optional)',
      preValidation: emptyBodyIsObject,
      handler: async (request, reply) => replyWith(reply, createOutcomes, await registry.create(request.body ?? {}), { id: request.body?.id }),
    },

    forkThread: {
      tags,
      summary: 'Fork a thread before one of its prompts: a new thread, named "<title> (fork)"',
      description:
        'A new thread holding the history before the prompt `fromMessageId` names (a user message, or the prompt that produced the reply named), linked to this one (`parentId`) and titled as its fork. The receipt gives that prompt, to edit and send there. The source is only read: a thread may be forked mid-run, from any message already persisted. (An edit or a regenerate in the same thread is `POST …/edit`.)',
      handler: async (request, reply) => {
        const { id } = request.params
        const { fromMessageId } = request.body
        return replyWith(reply, forkOutcomes, await registry.fork(id, fromMessageId), { threadId: id, fromMessageId })
      },
    },

    switchVersion: {
      tags,
      summary: 'Show another version of a prompt, with the conversation that followed it (in place)',
      description: "`messageId` is one of a user message's `versions`. Every follower gets a `branch` frame; the branch is written down, so a release or a restart resumes on it.",
      handler: async (request, reply) => {
        const { id } = request.params
        const { messageId } = request.body
        return replyWith(reply, versionOutcomes, await registry.version(id, messageId), { threadId: id, messageId })
      },
    },

    reportDraft: {
      tags,
      summary: "The composer's draft, for extensions that read the editor",
      handler: async (request, reply) =>
        registry.reportDraft(request.params.id, request.body.text)
          ? reply.code(204).send()
          : replyWith(reply, lookupOutcomes, { kind: 'not-live' }, { threadId: request.params.id }),
    },

    listCommands: {
      tags,
      summary: "The composer's commands: threadhost's, then pi's for this thread (builds a cold thread's runtime)",
      handler: async (request, reply) => {
        const commands = await registry.commands(request.params.id)
        return commands ? { commands } : replyWith(reply, lookupOutcomes, { kind: 'unknown' }, { threadId: request.params.id })
      },
    },

    runShortcut: {
      tags,
      summary: "Run an extension's keyboard shortcut (pi's registerShortcut) on the thread, as the key press would in pi's terminal",
      description:
        'The key is pi\'s key id as `GET …/commands` lists it (`kind: shortcut`), e.g. `ctrl+shift+u`. The handler is started, not awaited: what it does (a question, a notice, a prompt) comes over the follow. Builds a cold thread\'s runtime.',
      handler: async (request, reply) => {
        const { id } = request.params
        const { key } = request.body
        return replyWith(reply, shortcutOutcomes, await registry.shortcut(id, key), { threadId: id, key })
      },
    },

    listThreads: { tags, summary: 'Every thread', handler: async () => ({ threads: registry.list() }) },

    getThread: {
      tags,
      summary: "A thread's summary",
      handler: async (request, reply) =>
        registry.get(request.params.id) ?? replyWith(reply, lookupOutcomes, { kind: 'unknown' }, { threadId: request.params.id }),
    },

    updateThread: {
      tags,
      summary: 'Rename a thread, or change its model or thinking level for the runs to come',
      handler: async (request, reply) =>
        replyWith(reply, updateOutcomes, await registry.update(request.params.id, request.body), { threadId: request.params.id }),
    },

    deleteThread: {
      tags,
      summary: 'Delete a thread (a live one is disposed first)',
      handler: async (request, reply) => {
        const threadId = request.params.id
        // The user is asked before a worktree's work is discarded with the thread.
        const held = request.query.discardWorktree === 'true' ? undefined : await registry.worktreeHolds(threadId)
        if (held) return replyWith(reply, worktreeOutcomes, { kind: 'held', ...held }, { threadId })
        const outcome = await registry.delete(threadId)
        // As the cluster's other 503s: the retry reaches the thread's new owner, which deletes it.
        if (outcome.kind === 'owner-changed') reply.header('retry-after', '1')
        return replyWith(reply, deleteOutcomes, outcome, { threadId })
      },
    },
  }
}

/** Create and abort take an optional body: none at all means `{}` (a JSON `null` is a body, and a bad one). */
export async function emptyBodyIsObject(request: { body: unknown }): Promise<void> {
  if (request.body === undefined) request.body = {}
}
