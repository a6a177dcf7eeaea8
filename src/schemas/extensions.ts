/**
 * What became of the pi extensions threadhost loaded: `GET /api/extensions`, and the counts on
 * `GET /api/health`. pi reports load errors (a missing module, a syntax error), name clashes between
 * extensions and failures in their handlers (`session_start`, …) only to its terminal; here they are
 * what a user can see without reading the server's log.
 */
import { Type, type Static } from 'typebox'

/** `user`: the agent dir's extensions (every thread loads them); `project`: a workspace's, with its `cwd`. */
export const ExtensionScope = Type.Union([Type.Literal('user'), Type.Literal('project')])

const where = {
  path: Type.String(),
  scope: ExtensionScope,
  /** The workspace a project extension was loaded for. */
  cwd: Type.Optional(Type.String()),
}

export const LoadedExtension = Type.Object({
  ...where,
  /** The file's name (its directory's for an `index.ts`). */
  name: Type.String(),
  tools: Type.Array(Type.String()),
  commands: Type.Array(Type.String()),
  shortcuts: Type.Array(Type.String()),
})
export type LoadedExtension = Static<typeof LoadedExtension>

export const FailedExtension = Type.Object({
  ...where,
  error: Type.String(),
  /** The event whose handler failed (`session_start`, …); absent when the file did not load at all. */
  event: Type.Optional(Type.String()),
  /** The thread whose session met the failure (a handler's). */
  threadId: Type.Optional(Type.String()),
})
export type FailedExtension = Static<typeof FailedExtension>

/** Two extensions registering one tool (or flag) name: pi keeps both loaded and the first one's wins. */
export const ExtensionClash = Type.Object({ ...where, message: Type.String() })
export type ExtensionClash = Static<typeof ExtensionClash>

/** `GET /api/extensions`: as the latest session built for each scope (and workspace) found them. */
export const ExtensionList = Type.Object({
  loaded: Type.Array(LoadedExtension),
  failed: Type.Array(FailedExtension),
  clashes: Type.Array(ExtensionClash),
})
export type ExtensionList = Static<typeof ExtensionList>

/** `extensions` on `GET /api/health`. */
export const ExtensionCounts = Type.Object({ loaded: Type.Integer(), failed: Type.Integer(), clashes: Type.Integer() })
export type ExtensionCounts = Static<typeof ExtensionCounts>

export const extensionCounts = ({ loaded, failed, clashes }: ExtensionList): ExtensionCounts => ({
  loaded: loaded.length,
  failed: failed.length,
  clashes: clashes.length,
})
