/** The runtime's public face: the pi-backed factory, plus the pieces tests and docs refer to. */
export {
  createPiRuntimeFactory,
  PiRuntime,
  sessionPaths,
  takeQueued,
  type PiRuntimeFactoryOptions,
  type ResolvedModel,
} from './pi-adapter.js'
export { createDemoModel, demoReply, parseCalls, DEMO_PROVIDER, type DemoModel } from './demo-model.js'
export { consoleLogger, createExtensionUi, resolutionFor, type RuntimeLogger } from './extension-ui.js'
export { foldTranscript, IDS_ENTRY } from './transcript.js'
export { ASK_USER_QUESTION, buildQuestion, describeAnswer } from './tools/ask-user-question.js'
export { UI_DIALOG } from './tools/ui-dialog.js'
export { BASH_BLOCKED_REASON } from './tools/bash-permission.js'
export type * from './port.js'
