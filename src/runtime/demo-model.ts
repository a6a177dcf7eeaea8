/**
 * The `demo` model: offline and deterministic, built on pi-ai's faux provider.
 *
 * What it answers, looking at the latest message of the conversation:
 *
 * - A user message whose every non-empty line is `call <tool> <json-object>` (for example
 *   `call ui_dialog {"method":"confirm","title":"Deploy?"}`) → ONE assistant message with those
 *   tool calls, in order (stopReason `toolUse`).
 * - Tool results (the calls above came back) → a final text reply listing each tool's result,
 *   one line per tool: `- <tool>: <result text>`.
 * - `slow <n>` → streams n short words, one every `demoDelayMs`, and stops promptly on Stop.
 * - Anything else → streams back `You said: <text>` in small chunks.
 *
 * Streaming: replies go out in 4-character chunks, one every `demoDelayMs` (0 = as fast as
 * possible); the slow words are three letters and a space, so each chunk is exactly one word. The
 * faux provider checks the abort signal between chunks, which is what makes Stop prompt.
 *
 * The demo is one pi-ai Provider (`threadhost/demo`) registered once in the process's model runtime,
 * beside the user's own providers. Every model call builds a fresh faux core holding just this
 * call's reply, so concurrent threads never share a response queue and the provider keeps no state.
 */
import {
  createAssistantMessageEventStream,
  createFauxCore,
  createProvider,
  fauxAssistantMessage,
  fauxText,
  fauxToolCall,
  type AssistantMessage,
  type AssistantMessageEventStream,
  type Message,
  type Model,
  type Provider,
  type RegisterFauxProviderOptions,
  type TranscriptContext,
} from '@earendil-works/pi-ai'

/** The provider id the demo model carries; `demo` alone names it in threadhost's API. */
export const DEMO_PROVIDER = 'threadhost'
export const DEMO_MODEL_ID = 'demo'
/** How threadhost's API names the demo model. */
export const DEMO_MODEL = 'demo'

export interface DemoProvider {
  provider: Provider
  model: Model<string>
}

export function createDemoProvider(options: { delayMs: number }): DemoProvider {
  const delayMs = Math.max(0, options.delayMs)
  const coreOptions: RegisterFauxProviderOptions = {
    api: 'threadhost-demo',
    provider: DEMO_PROVIDER,
    models: [{ id: DEMO_MODEL_ID, name: 'threadhost demo (offline)', reasoning: false, input: ['text'], contextWindow: 128_000 }],
    tokenSize: { min: 1, max: 1 },
    ...(delayMs > 0 ? { tokensPerSecond: 1000 / delayMs } : {}),
  }
  const models = createFauxCore(coreOptions).models
  const stream = (model: Model<string>, context: TranscriptContext, streamOptions?: Parameters<ReturnType<typeof createFauxCore>['stream']>[2]) => {
    const core = createFauxCore(coreOptions)
    core.setResponses([(ctx) => demoReply(ctx)])
    const events = core.stream(model, context, streamOptions)
    return delayMs > 0 ? events : yieldingToTheLoop(events)
  }
  const provider = createProvider({
    id: DEMO_PROVIDER,
    name: 'threadhost demo',
    // Keyless: the demo needs no credential, and says so to pi's auth checks.
    auth: { apiKey: { name: 'none needed', resolve: async () => ({ auth: {} }) } },
    models,
    api: { stream, streamSimple: stream },
  })
  return { provider, model: models[0] }
}

/**
 * With no delay the faux provider streams a whole reply on microtasks, so a long reply would hold
 * the event loop for its entire run (no follower written to, no request answered). Forward its
 * events unchanged, but give the loop a turn every few milliseconds, as a network stream would.
 */
function yieldingToTheLoop(inner: AssistantMessageEventStream): AssistantMessageEventStream {
  const outer = createAssistantMessageEventStream()
  void (async () => {
    let since = performance.now()
    for await (const event of inner) {
      outer.push(event)
      if (performance.now() - since >= 1) {
        await new Promise((resolve) => setImmediate(resolve))
        since = performance.now()
      }
    }
    outer.end(await inner.result())
  })()
  return outer
}

const CALL_LINE = /^call\s+(\S+)\s+(\{.*\})\s*$/
const SLOW = /^slow\s+(\d+)\s*$/
const MAX_SLOW_WORDS = 10_000
const WORDS = ['one', 'two', 'sky', 'sun', 'red', 'fox', 'owl', 'bee', 'oak', 'elm', 'sea', 'ice']

/** The demo's answer to a conversation; exported so tests can check it without a session. */
export function demoReply(context: Pick<TranscriptContext, 'messages'>): AssistantMessage {
  const messages = context.messages
  const last = messages[messages.length - 1]
  if (last?.role === 'toolResult') return toolSummary(messages)
  const text = last?.role === 'user' ? userText(last) : ''
  const calls = parseCalls(text)
  if (calls) {
    return fauxAssistantMessage(
      calls.map((c) => fauxToolCall(c.name, c.args as Parameters<typeof fauxToolCall>[1])),
      { stopReason: 'toolUse' },
    )
  }
  const slow = SLOW.exec(text.trim())
  if (slow) return fauxAssistantMessage(fauxText(slowWords(Number(slow[1]))))
  return fauxAssistantMessage(fauxText(`You said: ${text}`))
}

/** `call <tool> <json-object>` on every non-empty line, or undefined when the text is anything else. */
export function parseCalls(text: string): Array<{ name: string; args: Record<string, unknown> }> | undefined {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean)
  if (lines.length === 0) return undefined
  const calls: Array<{ name: string; args: Record<string, unknown> }> = []
  for (const line of lines) {
    const match = CALL_LINE.exec(line)
    if (!match) return undefined
    let args: unknown
    try {
      args = JSON.parse(match[2])
    } catch {
      return undefined
    }
    if (!args || typeof args !== 'object' || Array.isArray(args)) return undefined
    calls.push({ name: match[1], args: args as Record<string, unknown> })
  }
  return calls
}

function slowWords(n: number): string {
  const count = Math.min(Math.max(n, 0), MAX_SLOW_WORDS)
  if (count === 0) return 'Nothing to say.'
  return Array.from({ length: count }, (_, i) => WORDS[i % WORDS.length]).join(' ')
}

function toolSummary(messages: Message[]): AssistantMessage {
  const results: string[] = []
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]
    if (m.role !== 'toolResult') break
    const text = m.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n')
    results.unshift(`- ${m.toolName}${m.isError ? ' (error)' : ''}: ${text}`)
  }
  return fauxAssistantMessage(fauxText(`Tool results:\n${results.join('\n')}`))
}

function userText(message: Extract<Message, { role: 'user' }>): string {
  if (typeof message.content === 'string') return message.content
  return message.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n')
}
