/**
 * The session tree's index kept up as pi appends (session-branches.ts): what a tree updated entry
 * by entry says of each prompt's versions is what one built from the whole session says, and a
 * session replaced by another is indexed anew, never mixed with the last. Entries come from pi's own
 * SessionManager (in memory), as a thread's session holds them.
 */
import { SessionManager } from '@earendil-works/pi-coding-agent'
import { describe, expect, it } from 'vitest'
import { SessionTree } from '../../src/runtime/session-branches.js'

const user = (text: string) => ({ role: 'user' as const, content: text, timestamp: Date.now() })
const reply = (text: string) => ({
  role: 'assistant' as const,
  content: [{ type: 'text' as const, text }],
  api: 'faux',
  provider: 'faux',
  model: 'faux',
  usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: 'stop' as const,
  timestamp: Date.now(),
})

/** Every user message's versions as a tree built from scratch sees them. */
const versions = (tree: SessionTree) => tree.entries.filter((e) => e.type === 'message' && e.message.role === 'user').map((e) => [e.id, tree.versionsOf(e.id)])

describe('the session tree, updated as the session grows', () => {
  it("says of each prompt's versions what a tree built from the whole session says, through edits at several places", () => {
    const session = SessionManager.inMemory('/tmp')
    // As a live session's navigation keeps it: over the session manager's own lookup.
    const tree = new SessionTree([], { get: (id) => session.getEntry(id) })
    const check = () => expect(versions(tree.update(session.getEntries()))).toEqual(versions(new SessionTree(session.getEntries())))

    const first = session.appendMessage(user('one'))
    session.appendMessage(reply('1'))
    check()
    const second = session.appendMessage(user('two'))
    session.appendMessage(reply('2'))
    check()
    // An edit of the second prompt: another version hanging where it hangs.
    session.branch(session.getEntry(second)!.parentId!)
    session.appendMessage(user('two, edited'))
    session.appendMessage(reply('2b'))
    check()
    // And of the first: a version at the root.
    session.resetLeaf()
    session.appendMessage(user('one, edited'))
    check()
    expect(tree.versionsOf(first)).toHaveLength(2)
    expect(tree.versionsOf(second)).toHaveLength(2)
  })

  it('indexes a session that replaced the last one anew, keeping nothing of it', () => {
    const before = SessionManager.inMemory('/tmp')
    const a = before.appendMessage(user('a'))
    before.resetLeaf()
    before.appendMessage(user('a again'))
    const tree = new SessionTree(before.getEntries())
    expect(tree.versionsOf(a)).toHaveLength(2)

    const after = SessionManager.inMemory('/tmp')
    const b = after.appendMessage(user('b'))
    after.appendMessage(reply('b'))
    after.appendMessage(user('c'))
    tree.update(after.getEntries())
    expect(tree.byId.get(a)).toBeUndefined()
    expect(tree.versionsOf(b)).toBeUndefined()
    expect(tree.versionsAt(null)).toEqual([b])
  })
})
