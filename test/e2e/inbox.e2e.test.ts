/**
 * The open-questions view answers in place: each waiting question is its card there, answered
 * without opening the thread; and wherever a question is answered, the other tabs' note says what
 * was chosen ("answered in another tab: us-east").
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright'
import { violations as axeViolations } from './axe.js'
import { card, gone, launch, newThread, openThread, send, startServer, type Server } from './harness.js'

const REGION = 'call ui_dialog {"method":"select","title":"Region?","options":["us-east","eu-west"]}'

describe('an inbox that answers in place', () => {
  let server: Server
  let browser: Browser
  let context: BrowserContext
  let inbox: Page
  let pane: Page

  beforeAll(async () => {
    server = await startServer()
    browser = await launch()
    context = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 860 }, reducedMotion: 'reduce' })
    context.setDefaultTimeout(30_000)
    inbox = await context.newPage()
    pane = await context.newPage()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  const inboxItem = (title: string) => inbox.getByRole('region', { name: 'Open questions' }).getByRole('listitem').filter({ hasText: title })

  test('a question is answered from the open-questions view; the tab on the thread says what was chosen there', async () => {
    const threadId = await newThread(server.url, 'Deploy region')
    await openThread(pane, server.url, threadId)
    await send(pane, REGION)
    await card(pane, 'Region?').waitFor()
    await inbox.goto(`${server.url}/#/questions`)
    const item = inboxItem('Deploy region')
    const question = item.getByRole('dialog', { name: 'Region?' })
    await question.waitFor()
    expect(await axeViolations(inbox)).toEqual([])
    await question.getByRole('button', { name: 'us-east', exact: true }).click()
    await gone(question)
    await item.getByRole('status').filter({ hasText: 'answered: us-east' }).waitFor()
    await gone(card(pane, 'Region?'))
    await pane.getByRole('status').filter({ hasText: 'answered in another tab: us-east' }).waitFor()
    await pane.getByRole('log').getByText('You chose', { exact: false }).or(pane.getByRole('button', { name: 'Send' })).first().waitFor()
  })

  test('a question answered on its thread leaves the open-questions view saying what was chosen', async () => {
    const threadId = await newThread(server.url, 'Second region')
    await openThread(pane, server.url, threadId)
    await inbox.goto(`${server.url}/#/questions`)
    await send(pane, REGION)
    const question = inboxItem('Second region').getByRole('dialog', { name: 'Region?' })
    await question.waitFor()
    await card(pane, 'Region?').getByRole('button', { name: 'eu-west', exact: true }).click()
    await gone(question)
    await inboxItem('Second region').getByRole('status').filter({ hasText: 'answered in another tab: eu-west' }).waitFor()
  })
})
