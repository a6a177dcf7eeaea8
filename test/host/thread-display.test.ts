import { describe, expect, it } from 'vitest'
import { displayOf } from '../../src/host/thread-display.js'
import { oneLine, UNTITLED } from '../../src/shared/thread-title.js'
import type { TranscriptEntry } from '../../src/schemas/index.js'

const record = { threadId: 'a1b2c3d4', title: 'a1b2c3d4' }
const said: TranscriptEntry[] = [
  { kind: 'user', messageId: 'u1', text: '  Plan the\nrelease   for Friday ', run: 1 },
  { kind: 'assistant', messageId: 'a1', text: 'Here is a plan.', streaming: false },
  { kind: 'tool', toolCallId: 't', name: 'bash', args: {}, state: 'done' },
]

describe('thread display', () => {
  it('an untitled thread is named by its first prompt on one line, with the last message as its preview', () => {
    expect(displayOf(record, said, undefined)).toEqual({ title: 'Plan the release for Friday', preview: 'Here is a plan.' })
  })

  it("a title somebody set wins over pi's session name, which wins over the first prompt", () => {
    expect(displayOf({ ...record, title: 'Release' }, said, { name: 'pi name' }).title).toBe('Release')
    expect(displayOf(record, said, { name: 'pi name' }).title).toBe('pi name')
  })

  it('a cold thread (no feed loaded) is named and previewed from its persisted conversation, and keeps its fork link', () => {
    expect(displayOf(record, undefined, { firstPrompt: 'from disk', lastMessage: 'last words', forkedFrom: 'p1' })).toEqual({
      title: 'from disk',
      preview: 'last words',
      parentId: 'p1',
    })
  })

  it('a thread with nothing said yet is a "New thread" with no preview', () => {
    expect(displayOf(record, [], undefined)).toEqual({ title: UNTITLED })
    expect(displayOf(record, undefined, undefined)).toEqual({ title: UNTITLED })
  })

  it('a long prompt is cut at a word to at most the limit, with an ellipsis', () => {
    const cut = oneLine('word '.repeat(40), 60)
    expect(cut.length).toBeLessThanOrEqual(60)
    expect(cut.endsWith('word…')).toBe(true)
  })
})
