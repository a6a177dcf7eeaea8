/**
 * The runtime factory: builds one pi AgentSession per thread — the user's agent dir and settings,
 * the thread's workspace, project trust, threadhost's own extensions — binds its extension UI to
 * the thread's bridge, and wraps it in a PiRuntime. What is persisted is read without a session.
 */
import { mkdirSync } from 'node:fs'
import {
  createAgentSession,
  createCodemodeExtension,
  createMcpExtension,
  createToolSearchExtension,
  DefaultResourceLoader,
  SessionManager,
  SettingsManager,
  type ExtensionAPI,
  type ExtensionFactory,
} from '@earendil-works/pi-coding-agent'
import type { AgentRuntime, RuntimeFactory, RuntimeOptions, UiBridge } from './port.js'
import type { PiModels } from './pi-models.js'
import { askBridge, consoleLogger, createExtensionUi, errorText, type RuntimeLogger } from './extension-ui.js'
import { decideTrust, extensionTrust, needsTrustDecision, trustAnswer, trustQuestion, type TrustPolicy } from './project-trust.js'
import { DEFAULT_TOOL_POLICY, ruleFor, type ToolPolicy } from './tool-policy.js'
import { prepareSessionFile } from './session-file.js'
import {
  listPersistedThreads,
  readPersistedTranscript,
  removePersisted,
  sessionPaths,
  threadIdOfSessionDir,
  threadOfSessionFile,
} from './persisted-sessions.js'
import { piSessionForks } from './session-fork.js'
import { ASK_USER_QUESTION, askUserQuestionExtension } from './tools/ask-user-question.js'
import { PERMISSION_CHOICES, TOOL_POLICY_ORIGIN, toolPermissionExtension, userShellPermission, type PermissionAsk } from './tools/tool-permission.js'
import { UI_DIALOG, uiDialogExtension } from './tools/ui-dialog.js'
import { checkpointHook } from './tools/checkpoint-hook.js'
import { fencedShell, fenceSessionWrites, ownershipFenceExtension } from './tools/ownership-fence.js'
import { sessionChangesHook } from './session-changes.js'
import { PiRuntime } from './pi-adapter.js'
import { commandContextActions, shutdownNotice } from './command-actions.js'
import { asThread } from './extension-output.js'
import { piTheme } from './pi-theme.js'
import { ExtensionStatus } from './extension-status.js'

export interface PiRuntimeFactoryOptions {
  dataDir: string
  /** The user's pi agent dir: settings, extensions, skills, prompt templates, context files, MCP. */
  agentDir: string
  models: PiModels
  /** `--trust-projects`: decide project trust for every workspace, or `ask` as pi does. */
  trustProjects?: TrustPolicy
  log?: RuntimeLogger
  /** `--tools-policy`: which tool calls run, ask first, or are refused; default DEFAULT_TOOL_POLICY. */
  toolPolicy?: ToolPolicy
  /** Test seam: extra extensions for every session, built per session with its bridge. */
  extraExtensions?: (ui: UiBridge) => ExtensionFactory[]
  /** How long extensions' `session_shutdown` handlers may take on dispose; default SHUTDOWN_HANDLERS_MS (extension-shutdown.ts). */
  shutdownMs?: number
}

/** A hook of the host's that registers its handlers at once (pi would await an async factory; this wrapper does not). */
type HostHook = (pi: ExtensionAPI) => void

/** Several of the host's synchronous hooks as one extension, registered in their order. */
function hostHooks(hooks: HostHook[]): ExtensionFactory {
  return (pi) => {
    for (const hook of hooks) hook(pi)
  }
}

export function createPiRuntimeFactory(options: PiRuntimeFactoryOptions): RuntimeFactory {
  const log = options.log ?? consoleLogger
  const { agentDir, models } = options
  const extensions = new ExtensionStatus(agentDir)
  const toolPolicy = options.toolPolicy ?? DEFAULT_TOOL_POLICY

  /** Everything pi does while building the session (loading extensions, session_start) runs as the thread's. */
  const create = (request: RuntimeOptions) => asThread(`thread ${request.threadId}`, log, () => build(request))

  async function build({ threadId, model: modelName, thinkingLevel, cwd, ui, actions, onSessionChange, begun, beforeFileChange, fence }: RuntimeOptions): Promise<AgentRuntime> {
    const model = models.find(modelName)
    if (!model) throw new Error(`Unknown model '${modelName}'.`)
    // The user's settings (global, and the project's once it is trusted), as pi reads them.
    const settingsManager = SettingsManager.create(cwd, agentDir, { projectTrusted: false })
    const policy = options.trustProjects ?? 'ask'
    let trust = needsTrustDecision(cwd, policy) ? ('ask' as const) : decideTrust(cwd, agentDir, settingsManager, policy)
    if (trust === true) settingsManager.setProjectTrusted(true)
    // Built per session: each tool closes over this thread's bridge.
    // threadhost's own tools are left out altogether where the policy refuses them.
    const own = (tool: string, factory: ExtensionFactory) => (ruleFor(toolPolicy, tool) === 'deny' ? [] : [factory])
    // The policy's questions say whose they are, apart from an extension's own gate on the same call.
    const askPermission: PermissionAsk = async (title, { signal, toolCallId }) => {
      const origin = { kind: 'extension' as const, name: TOOL_POLICY_ORIGIN, ...(toolCallId ? { toolCallId } : {}) }
      const resolution = await askBridge(ui, { spec: { method: 'select', title, options: PERMISSION_CHOICES }, origin, ...(signal ? { signal } : {}) }, log)
      const answer = resolution.answer
      return { ...(answer && 'value' in answer ? { value: answer.value } : {}), outcome: resolution.outcome }
    }
    // Cluster mode: a stale node's tool calls are refused, before a question is asked and again after.
    const fenced = fence ? [ownershipFenceExtension(fence)] : []
    // The host's own hooks load as one extension: each extension costs a session ≈ 1.5 KiB of pi's
    // bookkeeping (its maps of handlers, tools, commands…) for its life. The checkpoint's `tool_call`
    // handler comes after the tool policy's and before the fence's second check; pi tells no fence
    // of a session's changes, so their handlers keep their order among their events' handlers.
    const hooks: HostHook[] = [
      ...(beforeFileChange ? [checkpointHook(beforeFileChange)] : []),
      ...(onSessionChange ? [sessionChangesHook(onSessionChange, (m) => models.nameOf(m))] : []),
    ]
    const extensionFactories: ExtensionFactory[] = [
      ...fenced,
      ...own(ASK_USER_QUESTION, askUserQuestionExtension(ui, log)),
      ...own(UI_DIALOG, uiDialogExtension(ui, log)),
      toolPermissionExtension(toolPolicy, askPermission),
      ...(hooks.length > 0 ? [hostHooks(hooks)] : []),
      ...fenced,
      ...(options.extraExtensions?.(ui) ?? []),
    ]
    const resourceLoader = new DefaultResourceLoader({
      cwd,
      agentDir,
      settingsManager,
      // No terminal here: a package install's output goes to the log, not over the server's stdout.
      packageCommandOutput: 'capture',
      extensionFactories: [
        ...extensionFactories,
        // What pi's CLI loads as built-ins and SDK sessions must add themselves (docs/sdk.md).
        { name: 'codemode', factory: createCodemodeExtension(), replaceable: true, hidden: true },
        { name: 'tool_search', factory: createToolSearchExtension(), replaceable: true, hidden: true },
        { name: 'mcp', factory: createMcpExtension(), replaceable: true, hidden: true },
      ],
    })
    await resourceLoader.reload(
      trust === 'ask'
        ? {
            // pi loads the global extensions first and lets them decide; what it sets here is the trust the project loads with.
            resolveProjectTrust: async ({ extensionsResult }) => {
              const byExtension = await extensionTrust(extensionsResult, cwd, agentDir, (m) => log.warn(m))
              trust = byExtension ?? decideTrust(cwd, agentDir, settingsManager, policy)
              return trust === true
            },
          }
        : undefined,
    )
    extensions.loaded(cwd, resourceLoader.getExtensions())
    const paths = sessionPaths(options.dataDir, threadId)
    mkdirSync(paths.dir, { recursive: true })
    // Rejects with SessionDamaged before pi ever opens a damaged file: pi would rewrite or extend it.
    const torn = prepareSessionFile(paths.file, threadId)
    if (torn) log.warn(`thread ${threadId}: its session file's last line was torn by a crash; cut off (bytes kept in ${torn})`)
    // open() on a missing file starts a new session that will be written to exactly this path.
    const sessionManager = SessionManager.open(paths.file, paths.dir, cwd)
    if (fence && !fenceSessionWrites(sessionManager, fence, (why) => log.warn(`thread ${threadId}: session entry not written: ${why}`))) {
      log.warn(`thread ${threadId}: this pi's SessionManager has no _persist/_rewriteFile; a stale node's late entries are not fenced`)
    }
    const { session } = await createAgentSession({
      cwd,
      agentDir,
      modelRuntime: models.runtime,
      model,
      ...(thinkingLevel ? { thinkingLevel } : {}),
      settingsManager,
      resourceLoader,
      sessionManager,
      // As pi's runtime starts a session it forked or made new: extensions hear where it came from.
      ...(begun
        ? { sessionStartEvent: { type: 'session_start' as const, reason: begun.reason, previousSessionFile: sessionPaths(options.dataDir, begun.previousThreadId).file } }
        : {}),
    })
    const askTrust =
      trust === 'ask'
        ? async () => {
            const origin = { kind: 'extension' as const, name: 'project trust' }
            const resolution = await askBridge(ui, { spec: trustQuestion(cwd), origin }, log)
            if (!trustAnswer(resolution, cwd, agentDir)) return
            settingsManager.setProjectTrusted(true)
            await session.reload()
            extensions.loaded(cwd, resourceLoader.getExtensions())
          }
        : undefined
    const runtime = new PiRuntime(session, {
      log,
      models,
      ...(askTrust ? { pendingTrust: askTrust } : {}),
      label: `thread ${threadId}`,
      ...(options.shutdownMs !== undefined ? { shutdownMs: options.shutdownMs } : {}),
      shellPermission: fence ? fencedShell(fence, userShellPermission(toolPolicy, askPermission)) : userShellPermission(toolPolicy, askPermission),
    })
    const tell = (message: string) => {
      log.info(`thread ${threadId}: ${message}`)
      try {
        ui.notify(message, 'warning')
      } catch (error) {
        log.warn(`ui.notify failed: ${errorText(error)}`)
      }
    }
    // pi's theme as its RPC mode sets it up: from the user's setting, once per process.
    piTheme(settingsManager.getTheme())
    // Bound as pi's RPC mode binds a remote UI: its command-context actions, its shutdown. Its mode is
    // "tui" where the host draws terminal components (extensions guard custom() with it), else "rpc".
    await session.bindExtensions({
      uiContext: createExtensionUi(ui, log),
      mode: ui.showTerminal ? 'tui' : 'rpc',
      commandContextActions: commandContextActions({
        session,
        own: runtime,
        actions,
        setEditorText: (text) => ui.setEditorText(text),
        tell,
        threadOfSessionFile: (path) => threadOfSessionFile(options.dataDir, path),
      }),
      shutdownHandler: () => tell(shutdownNotice()),
      onError: (e) => {
        const message = `extension ${e.extensionPath} failed on ${e.event}: ${e.error}`
        log.error(message)
        extensions.failed(cwd, threadId, e)
        runtime.reportError(message)
      },
    })
    return runtime
  }

  return {
    create,
    extensions: () => extensions.list(),

    readTranscript: (threadId: string) => readPersistedTranscript(options.dataDir, threadId),
    listPersisted: () => listPersistedThreads(options.dataDir),
    remove: (threadId: string) => removePersisted(options.dataDir, threadId),

    ...piSessionForks((threadId) => sessionPaths(options.dataDir, threadId), threadIdOfSessionDir),
  }
}
