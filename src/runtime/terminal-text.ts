/**
 * Text an extension meant for a terminal, made plain for a page. Extensions colour what they show
 * with `ctx.ui.theme` (pi's theme writes ANSI escapes) or with escapes of their own; a browser would
 * print those as raw bytes. The page draws plain text in its own style, so the escapes (colours,
 * styles, OSC sequences such as hyperlinks) are dropped and the text they wrapped is kept.
 */
import { stripVTControlCharacters } from 'node:util'

export function plainText(text: string): string {
  return stripVTControlCharacters(text)
}
