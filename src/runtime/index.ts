/** The runtime's public face: the pi-backed factory, plus the pieces tests and docs refer to. */
export { PiRuntime } from './pi-adapter.js'
export { takeQueued } from './queue-mirror.js'
export { createPiRuntimeFactory, type PiRuntimeFactoryOptions } from './session-factory.js'
export { sessionPaths } from './persisted-sessions.js'
export { describeSurvey, surveyAgentDir, type AgentDirSurvey } from './agent-dir.js'
export { PiModels, type PiModelsOptions } from './pi-models.js'
export { createDemoProvider, demoReply, parseCalls, DEMO_MODEL, DEMO_PROVIDER, type DemoProvider } from './demo-model.js'
export { consoleLogger, createExtensionUi, resolutionFor, type RuntimeLogger } from './extension-ui.js'
export { foldTranscript, IDS_ENTRY } from './transcript.js'
export { ASK_USER_QUESTION, buildQuestion, describeAnswer } from './tools/ask-user-question.js'
export { UI_DIALOG } from './tools/ui-dialog.js'
export {
  ALLOW_FOR_THREAD,
  ALLOW_ONCE,
  DENY,
  PERMISSION_CHOICES,
  TOOL_PERMISSION_ENTRY,
  TOOL_POLICY_ORIGIN,
  type ToolPermissionRecord,
} from './tools/tool-permission.js'
export { DEFAULT_TOOL_POLICY, loadToolPolicy, parseToolPolicy, ruleFor, ToolPolicyError, type ToolPolicy, type ToolRule } from './tool-policy.js'
export type * from './port.js'
