/**
 * pi's own example extensions, installed unmodified in a thread's agent dir, get from threadhost
 * what pi's RPC mode gives a remote UI: its theme, plain text on the page, widget placement, their
 * tools' whole notices, a word each time they need a terminal, and their stdout kept out of ours.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { delimiter, dirname, join } from 'node:path'
import { FakeBridge, installExamples, keptLog, piRuntimes, Recorder, tempDir, waitFor, type PiTestOptions } from './helpers.js'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function thread(examples: string[], extra: Omit<Partial<PiTestOptions>, 'dataDir' | 'agentDir' | 'log'> = {}) {
  const tmp = tempDir()
  cleanups.push(tmp.cleanup)
  const agentDir = join(tmp.dir, 'agent')
  installExamples(agentDir, ...examples)
  const log = keptLog()
  const { create } = await piRuntimes({ dataDir: tmp.dir, agentDir, log, ...extra })
  const ui = new FakeBridge()
  const runtime = await create({ threadId: 't', model: 'demo', ui })
  cleanups.push(() => runtime.dispose())
  return { ui, runtime, rec: new Recorder(runtime), log, dir: tmp.dir }
}

const ESC = '\x1b'
const statuses = (ui: FakeBridge, key: string) => ui.shown.filter((c) => c[0] === 'setStatus' && c[1] === key).map((c) => c[2])

describe("pi's example extensions in a thread", () => {
  it("ctx.ui.theme is pi's theme: /plan (plan-mode) turns plan mode on and shows its status chip, without an error", async () => {
    const { runtime, rec, ui, log } = await thread(['plan-mode'])
    runtime.prompt({ messageId: 'p', text: '/plan' })
    await rec.next('settled')
    expect(ui.notes.map((n) => n.message)).toContain('Plan mode enabled. Built-in write tools disabled.')
    expect(statuses(ui, 'plan-mode').at(-1)).toBe('⏸ plan')
    expect(rec.of('failure')).toEqual([])
    expect(log.errors).toEqual([])
  })

  it('terminal colours never reach the page: status items (status-line, working-indicator) and working messages (working-message-test) arrive as plain text', async () => {
    const { runtime, rec, ui, log } = await thread(['status-line.ts', 'working-indicator.ts', 'working-message-test.ts'])
    runtime.prompt({ messageId: 'p', text: 'hi' })
    await rec.next('settled')
    expect(statuses(ui, 'status-demo')).toEqual(['Ready', '● Turn 1...', '✓ Turn 1 complete'])
    expect(statuses(ui, 'working-indicator')).toEqual(['Indicator: custom spinner'])
    expect(ui.shown.filter((c) => c[0] === 'setWorking')).toEqual([['setWorking', { message: 'Working... (custom)', visible: true }]])
    expect(JSON.stringify(ui.shown)).not.toContain(ESC)
    expect(log.errors).toEqual([])
  })

  it("a widget's placement reaches the bridge (widget-placement)", async () => {
    const { ui } = await thread(['widget-placement.ts'])
    expect(ui.shown.filter((c) => c[0] === 'setWidget')).toEqual([
      ['setWidget', 'widget-above', ['Above editor widget']],
      ['setWidget', 'widget-below', ['Below editor widget'], 'belowEditor'],
    ])
  })

  it("a tool's own truncation notice at the end of its output reaches the followers (truncated-tool)", async () => {
    // The example runs ripgrep; this `rg` prints 3000 matching lines, more than the tool keeps.
    const bin = tempDir()
    cleanups.push(bin.cleanup)
    mkdirSync(join(bin.dir, 'bin'))
    const rg = join(bin.dir, 'bin', 'rg')
    writeFileSync(rg, `#!/bin/sh\nseq 1 3000 | awk '{ print "src/file.ts:" $1 ": const match = true" }'\n`)
    chmodSync(rg, 0o755)
    const path = process.env.PATH
    process.env.PATH = `${join(bin.dir, 'bin')}${delimiter}${path}`
    cleanups.push(() => (process.env.PATH = path))

    const { runtime, rec } = await thread(['truncated-tool.ts'])
    runtime.prompt({ messageId: 'p', text: 'call rg {"pattern":"match"}' })
    await rec.next('settled')
    const end = rec.of('tool-end')[0]
    expect(end.isError).toBe(false)
    expect(end.result.text).toMatch(/^src\/file\.ts:1: const match = true\n/)
    expect(end.result.text).toMatch(/\[Output truncated: showing \d+ of 3000 lines .*Full output saved to: .+\]$/)
    expect(end.result.truncated).toBeGreaterThan(0)
    const saved = /Full output saved to: (.+)\]$/.exec(end.result.text)?.[1]
    if (saved) rmSync(dirname(saved), { recursive: true, force: true })
  })

  it('each terminal-only call is told, not only the first of the session: setEditorComponent at the start (modal-editor), then /footer (custom-footer)', async () => {
    const { runtime, rec, ui } = await thread(['modal-editor.ts', 'custom-footer.ts'])
    const told = () => ui.notes.map((n) => n.message)
    expect(told()).toEqual(['An extension needs a terminal: it called ui.setEditorComponent(), which this web host cannot show.'])
    runtime.prompt({ messageId: 'p', text: '/footer' })
    await rec.next('settled')
    expect(told()).toContain('An extension needs a terminal: it called ui.setFooter(), which this web host cannot show.')
  })

  it("what an extension writes to stdout becomes the thread's log record, not a line in the server's output (notify)", async () => {
    // notify.ts writes a terminal notification (OSC 777) to stdout when the agent settles.
    for (const name of ['WT_SESSION', 'KITTY_WINDOW_ID']) {
      const value = process.env[name]
      delete process.env[name]
      cleanups.push(() => (value === undefined ? undefined : (process.env[name] = value)))
    }
    const written: string[] = []
    const write = process.stdout.write
    process.stdout.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
      written.push(String(chunk))
      return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest)
    } as typeof process.stdout.write
    cleanups.push(() => (process.stdout.write = write))

    const { runtime, rec, log } = await thread(['notify.ts'])
    runtime.prompt({ messageId: 'p', text: 'hi' })
    await rec.next('settled')
    await waitFor(() => log.infos.some((m) => m.includes('777;notify;Pi;Ready for input')), 'the log record')
    expect(log.infos.find((m) => m.includes('777;notify'))).toMatch(/^thread t: an extension wrote to stdout: /)
    expect(written.join('')).not.toContain('777;notify')
    // What is not a thread's work still reaches stdout.
    process.stdout.write('')
    expect(written).toContain('')
  })
})
