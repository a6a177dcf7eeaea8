/**
 * A tool's result (or partial result) as the feed carries it: the host's own shape, not pi's.
 *
 * pi's results are `{content: [text | image parts], details}` and can be megabytes (a file read, a
 * screenshot). The feed fans each frame out to every tab and keeps it in the snapshot, so the host
 * compacts a result to this before it leaves the runtime (`compactToolResult`, for live runs and
 * for cold threads alike), and the client draws exactly this — one contract, checked on both ends.
 */
import { Type, type Static } from 'typebox'

/** An image part the tool returned: named, never sent (the feed carries no image bytes). */
export const ToolResultImage = Type.Object({ mimeType: Type.String() })
export type ToolResultImage = Static<typeof ToolResultImage>

export const ToolResult = Type.Object({
  /** The text parts, joined by newlines; real newlines, meant to be shown preformatted. */
  text: Type.String(),
  /**
   * Characters cut from the middle of `text` to keep frames small (a line in `text` says so where
   * they were; its start and its end are kept); absent when nothing was cut.
   */
  truncated: Type.Optional(Type.Integer({ minimum: 1 })),
  /** Placeholders for the image parts, in order; absent when there were none. */
  images: Type.Optional(Type.Array(ToolResultImage)),
  /** The tool's structured details, only when JSON-safe and small; the text is always enough. */
  details: Type.Optional(Type.Unknown()),
})
export type ToolResult = Static<typeof ToolResult>
