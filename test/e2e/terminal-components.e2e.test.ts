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

  test('question.ts: the component opens focused in every tab; arrows and Enter in one tab answer it while the other watches read-only', async () => {
    const [a, b] = await tabs(2, 'Colours')
    await send(a, QUESTION)
    await screen(a).getByText('Which colour?').waitFor()
    await screen(b).getByText('Which colour?').waitFor()
    await expect.poll(() => screen(a).evaluate((el) => el.matches(':focus'))).toBe(true)
    await a.keyboard.press('ArrowDown')
    await a.keyboard.press('ArrowDown')
    await screen(a).getByText('> 3. Blue').waitFor()
    await screen(b).getByText('> 3. Blue').waitFor()
    await card(b, 'Terminal').getByText('Another tab is typing: you are watching.').waitFor()
    await screen(b).focus()
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
    await screen(a).getByText('Name?').waitFor()
    await a.keyboard.press('ArrowDown')
    await a.keyboard.press('Enter')
    await screen(a).getByText('Your answer:').waitFor()
    await a.keyboard.type('Zoe')
    await screen(a).getByText('Zoe').waitFor()
    await a.keyboard.press('Enter')
    await gone(card(a, 'Terminal'))
    await a.getByText('User wrote: Zoe').first().waitFor()
    await a.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached', timeout: 15_000 })

    await send(a, 'call question {"question":"Again?","options":[{"label":"Yes"}]}')
    await screen(a).getByText('Again?').waitFor()
    await a.keyboard.press('Escape')
    await gone(card(a, 'Terminal'))
    await a.getByText('User cancelled the selection').first().waitFor()
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
    await screen(a).getByText('Which scope?').waitFor()
    await a.keyboard.press('ArrowDown')
    await a.keyboard.press('Enter')
    await screen(a).getByText('When?').waitFor()
    await a.keyboard.press('Tab')
    await screen(a).getByText('Unanswered: When').waitFor()
    await a.keyboard.press('Shift+Tab')
    await screen(a).getByText('When?').waitFor()
    await a.keyboard.press('Enter')
    await screen(a).getByText('Press Enter to submit').waitFor()
    await a.keyboard.press('Enter')
    await gone(card(a, 'Terminal'))
    await a.getByText('Scope: user selected: 2. Mine').first().waitFor()
  })

  test('/todos shows the list and Escape closes it; /snake renders, turns on an arrow key, and Escape quits; a reload mid-game shows the board again; Stop ends a component', async () => {
    const [a] = await tabs(1, 'Games')
    await send(a, '/todos')
    await screen(a).getByText('No todos yet. Ask the agent to add some!').waitFor()
    await a.keyboard.press('Escape')
    await gone(card(a, 'Terminal'))

    await send(a, '/snake')
    await screen(a).getByText('SNAKE').waitFor()
    const before = await screen(a).innerText()
    await a.keyboard.press('ArrowUp')
    await expect.poll(() => screen(a).innerText()).not.toBe(before)
    await a.reload()
    await screen(a).getByText('SNAKE').waitFor()
    await screen(a).focus()
    await a.keyboard.press('Escape')
    await gone(card(a, 'Terminal'))

    await send(a, QUESTION)
    await screen(a).getByText('Which colour?').waitFor()
    await a.getByRole('button', { name: 'Stop' }).click()
    await gone(card(a, 'Terminal'))
    await a.getByText('stopped').first().waitFor()
  })
})
