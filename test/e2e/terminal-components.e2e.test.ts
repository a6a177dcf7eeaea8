/**
 * pi's terminal components in Chromium (issue 21): the real server with an agent dir holding pi's
 * own example extensions, copied unmodified from node_modules — question.ts, questionnaire.ts,
 * todo.ts (/todos) and snake.ts — driven with the keyboard in the page, as in pi's terminal, while a
 * second tab watches. Titles are cited by docs/flows/terminal-components.md.
 */
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Browser, BrowserContext, Page } from 'playwright'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import type { TerminalView } from '../../src/ui/terminal-view.js'
import { card, gone, launch, newThread, openThread, send, startServer, type Server } from './harness.js'

const EXAMPLES = fileURLToPath(new URL('../../node_modules/@earendil-works/pi-coding-agent/examples/extensions/', import.meta.url))
const QUESTION = 'call question {"question":"Which colour?","options":[{"label":"Red"},{"label":"Green"},{"label":"Blue"}]}'

describe("pi's terminal components in the browser", () => {
  let server: Server
  let browser: Browser
  let context: BrowserContext
  let agentDir: string

  beforeAll(async () => {
    agentDir = await mkdtemp(join(tmpdir(), 'threadhost-e2e-terminal-'))
    await mkdir(join(agentDir, 'extensions'))
    for (const file of ['question.ts', 'questionnaire.ts', 'todo.ts', 'snake.ts']) await copyFile(join(EXAMPLES, file), join(agentDir, 'extensions', file))
    server = await startServer({ args: ['--agent-dir', agentDir] })
    browser = await launch()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
    if (agentDir) await rm(agentDir, { recursive: true, force: true })
  })
  afterEach(async () => {
    await context?.close()
  })

  async function tabs(n: number, title: string): Promise<Page[]> {
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    context.setDefaultTimeout(45_000) // generous: CI machines here are small and busy
    const threadId = await newThread(server.url, title)
    const pages: Page[] = []
    for (let i = 0; i < n; i++) {
      const page = await context.newPage()
      await openThread(page, server.url, threadId)
      pages.push(page)
    }
    return pages
  }

  const screen = (page: Page) => card(page, 'Terminal').getByRole('application')
  /** What the terminal shows, as text: read from xterm's buffer (its DOM rows are split into styled runs, and copied for screen readers). */
  const shown = (page: Page) => card(page, 'Terminal').locator('terminal-view').evaluate((el) => (el as TerminalView).text)
  const showing = (page: Page, text: string) => expect.poll(() => shown(page), { timeout: 45_000 }).toContain(text)

  test('question.ts: the component opens focused in every tab; arrows and Enter in one tab answer it while the other watches read-only', async () => {
    const [a, b] = await tabs(2, 'Colours')
    await send(a, QUESTION)
    await showing(a, 'Which colour?')
    await showing(b, 'Which colour?')
    await expect.poll(() => screen(a).evaluate((el) => el.matches(':focus-within'))).toBe(true)
    await a.keyboard.press('ArrowDown')
    await a.keyboard.press('ArrowDown')
    await showing(a, '> 3. Blue')
    await showing(b, '> 3. Blue')
    await card(b, 'Terminal').getByText('Another tab is typing: you are watching.').waitFor()
    await screen(b).click()
    await b.keyboard.press('ArrowUp')
    await card(b, 'Terminal').getByText('Another tab is typing into this').waitFor()
    await a.keyboard.press('Enter')
    await gone(card(a, 'Terminal'))
    await gone(card(b, 'Terminal'))
    await a.getByText('User selected: 3. Blue').first().waitFor()
    await b.getByText('answered in another tab').waitFor()
  })

  test('question.ts: "Type something." opens its inline editor, typed text and Enter answer; Escape cancels the next one', async () => {
    const [a] = await tabs(1, 'Names')
    await send(a, 'call question {"question":"Name?","options":[{"label":"Ann"}]}')
    await showing(a, 'Name?')
    await a.keyboard.press('ArrowDown')
    await a.keyboard.press('Enter')
    await showing(a, 'Your answer:')
    await a.keyboard.type('Zoe')
    await showing(a, 'Zoe')
    await a.keyboard.press('Enter')
    await gone(card(a, 'Terminal'))
    await a.getByText('User wrote: Zoe').first().waitFor()
    await a.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached', timeout: 15_000 })

    await send(a, 'call question {"question":"Again?","options":[{"label":"Yes"}]}')
    await showing(a, 'Again?')
    await a.keyboard.press('Escape')
    await gone(card(a, 'Terminal'))
    await a.getByText('User cancelled the selection').first().waitFor()
  })

  test('question.ts: text an input method composes (é) reaches the inline editor and answers', async () => {
    const [a] = await tabs(1, 'Accents')
    await send(a, 'call question {"question":"Name?","options":[{"label":"Ann"}]}')
    await showing(a, 'Name?')
    await a.keyboard.press('ArrowDown')
    await a.keyboard.press('Enter')
    await showing(a, 'Your answer:')
    await a.keyboard.type('Zo')
    // A real composition in Chromium, as an input method (or a dead key) makes it: composing, then committed.
    const cdp = await context.newCDPSession(a)
    await cdp.send('Input.imeSetComposition', { text: 'é', selectionStart: 1, selectionEnd: 1 })
    await cdp.send('Input.insertText', { text: 'é' })
    await showing(a, 'Zoé')
    await a.keyboard.press('Enter')
    await gone(card(a, 'Terminal'))
    await a.getByText('User wrote: Zoé').first().waitFor()
  })

  test('questionnaire.ts: Enter answers a question and moves on, Tab and Shift+Tab move between the tabs, Enter on Submit answers', async () => {
    const [a] = await tabs(1, 'Plan')
    const two = {
      questions: [
        { id: 'scope', label: 'Scope', prompt: 'Which scope?', options: [{ value: 'all', label: 'All' }, { value: 'mine', label: 'Mine' }] },
        { id: 'when', label: 'When', prompt: 'When?', options: [{ value: 'now', label: 'Now' }, { value: 'later', label: 'Later' }] },
      ],
    }
    await send(a, `call questionnaire ${JSON.stringify(two)}`)
    await showing(a, 'Which scope?')
    await a.keyboard.press('ArrowDown')
    await a.keyboard.press('Enter')
    await showing(a, 'When?')
    await a.keyboard.press('Tab')
    await showing(a, 'Unanswered: When')
    await a.keyboard.press('Shift+Tab')
    await showing(a, 'When?')
    await a.keyboard.press('Enter')
    await showing(a, 'Press Enter to submit')
    await a.keyboard.press('Enter')
    await gone(card(a, 'Terminal'))
    await a.getByText('Scope: user selected: 2. Mine').first().waitFor()
  })

  test('/todos shows the list and Escape closes it; /snake renders, turns on an arrow key, and Escape quits; a reload mid-game shows the board again; Stop ends a component', async () => {
    const [a] = await tabs(1, 'Games')
    await send(a, '/todos')
    await showing(a, 'No todos yet. Ask the agent to add some!')
    await a.keyboard.press('Escape')
    await gone(card(a, 'Terminal'))

    await send(a, '/snake')
    await showing(a, 'SNAKE')
    const before = await shown(a)
    await a.keyboard.press('ArrowUp')
    await expect.poll(() => shown(a)).not.toBe(before)
    await a.reload()
    await showing(a, 'SNAKE')
    await screen(a).click()
    await a.keyboard.press('Escape')
    await gone(card(a, 'Terminal'))

    await send(a, QUESTION)
    await showing(a, 'Which colour?')
    await a.getByRole('button', { name: 'Stop' }).click()
    await gone(card(a, 'Terminal'))
    await a.getByText('stopped').first().waitFor()
  })
})
