/**
 * docs/machines.md cannot drift: each machine's mermaid block there must equal `toMermaid(machine)`
 * of the machine as it is now. To refresh after changing a machine, run this test and paste the
 * block it prints under the machine's marker.
 */
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { setup, type AnyStateMachine } from 'xstate'
import { describe, expect, it } from 'vitest'
import { askQueueMachine } from '../../src/machines/ask-queue.machine.js'
import { toMermaid, transitionsOf } from '../../src/machines/diagram.js'
import { dialogMachine } from '../../src/machines/dialog.machine.js'
import { threadMachine } from '../../src/machines/thread.machine.js'
import { threadSlotMachine } from '../../src/machines/thread-slot.machine.js'

const DOC = fileURLToPath(new URL('../../docs/machines.md', import.meta.url))

const MACHINES: [string, AnyStateMachine][] = [
  ['threadMachine', threadMachine],
  ['dialogMachine', dialogMachine],
  ['askQueueMachine', askQueueMachine],
  ['threadSlotMachine', threadSlotMachine],
]

/** The mermaid block that follows `<!-- generated: toMermaid(name) -->` (or another generator's marker) in the doc. */
function blockIn(doc: string, name: string, marker = `<!-- generated: toMermaid(${name}) -->`): string | undefined {
  const at = doc.indexOf(marker)
  if (at < 0) return undefined
  const m = /```mermaid\n([\s\S]*?)\n```/.exec(doc.slice(at + marker.length))
  return m?.[1]
}

describe('docs/machines.md', () => {
  const doc = existsSync(DOC) ? readFileSync(DOC, 'utf8') : ''
  for (const [name, machine] of MACHINES)
    it(`the ${name} diagram in docs/machines.md is toMermaid(${name}) of the current machine`, () => {
      const expected = toMermaid(machine)
      const found = blockIn(doc, name)
      if (found !== expected)
        console.log(`docs/machines.md is stale: put this under <!-- generated: toMermaid(${name}) -->\n\n\`\`\`mermaid\n${expected}\n\`\`\`\n`)
      expect(found, `the ${name} block in docs/machines.md (expected block printed above)`).toBe(expected)
    })
})

describe('toMermaid', () => {
  const m = setup({ guards: { ok: () => true } }).createMachine({
    id: 'm',
    initial: 'a',
    on: { PING: {} },
    states: {
      a: { on: { GO: { target: 'b', guard: 'ok' }, STAY: {} } },
      b: {
        initial: 'a',
        states: { a: { always: { target: '#m.c' } } },
      },
      c: { type: 'final' },
    },
  })
  it('draws nested states, initial and final markers, guards, eventless and targetless transitions, and root transitions', () => {
    expect(toMermaid(m)).toBe(
      [
        'stateDiagram-v2',
        '  [*] --> m',
        '  state m {',
        '    [*] --> a',
        '    state b {',
        '      [*] --> b_a',
        '      state "a" as b_a',
        '      b_a --> c : always',
        '    }',
        '    a --> b : GO [ok]',
        '    a --> a : STAY',
        '    c --> [*]',
        '  }',
        '  m --> m : PING',
      ].join('\n'),
    )
  })
  it('draws a delayed transition as after its delay, keyed by the event xstate raises for it', () => {
    const timed = setup({ delays: { wait: 5 } }).createMachine({ id: 't', initial: 'a', states: { a: { after: { wait: 'b' } }, b: {} } })
    expect(toMermaid(timed)).toContain('a --> b : after wait')
    expect(transitionsOf(timed).map((t) => t.key)).toEqual(['t.a|xstate.after.wait.t.a|0'])
  })
  it('lists every transition with a key that names its source, event and priority', () => {
    expect(transitionsOf(m).map((t) => t.key)).toEqual(['m|PING|0', 'm.a|GO|0', 'm.a|STAY|0', 'm.b.a|always|0'])
  })
})
