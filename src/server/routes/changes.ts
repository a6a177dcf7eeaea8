/**
 * What the agent changed in a thread's workspace: a run's diff, the thread's, and the user's revert
 * and redo. The host's checkpoints decide; these reply with the outcome table's answer.
 */
import type { ThreadRegistry } from '../../host/thread-registry.js'
import { changesOutcomes, restoreOutcomes } from '../../schemas/outcomes.js'
import { replyWith } from '../responses.js'
import type { RouteHandlers } from './register.js'

const tags = ['changes']

export function changeRoutes(registry: ThreadRegistry): RouteHandlers {
  return {
    runChanges: {
      tags,
      summary: 'What one run changed in the workspace: its files (added, modified, deleted) and their unified diffs',
      description: 'Binary files are named, never dumped; a long diff is cut (`truncated`). `untracked` says when some of the run\'s changes could not be seen (bash outside a git repository).',
      handler: async (request, reply) => {
        const { id } = request.params
        const run = Number(request.params.run)
        return replyWith(reply, changesOutcomes, await registry.changes(id, run), { threadId: id, run })
      },
    },
    threadChanges: {
      tags,
      summary: "What the thread's runs changed in the workspace so far, as one diff (reverted runs excluded)",
      handler: async (request, reply) => {
        const { id } = request.params
        return replyWith(reply, changesOutcomes, await registry.changes(id), { threadId: id })
      },
    },
    revert: {
      tags,
      summary: 'Restore the workspace to before run `toRun`: that run and every later one are reverted',
      description:
        'Refused (409) while a run is in flight, and with the conflicting `paths` when a file it would restore was changed since the agent left it: nothing is overwritten. Every follower gets `workspace-restored`; the model is told in its conversation.',
      handler: async (request, reply) => {
        const { id } = request.params
        return replyWith(reply, restoreOutcomes, await registry.revert(id, request.body.toRun), { threadId: id })
      },
    },
    redo: {
      tags,
      summary: 'Undo the last revert, while nothing it restored was changed since',
      handler: async (request, reply) => {
        const { id } = request.params
        return replyWith(reply, restoreOutcomes, await registry.redo(id), { threadId: id })
      },
    },
  }
}
