/**
 * pi's keys that act on the pane rather than on the draft: Ctrl+O shows or hides tool output,
 * Ctrl+L opens the model picker. Shift+Tab (the thinking level) and Up / Alt+Up (the draft) belong
 * to the composer, which asks the pane with the events named here.
 */
export type PaneAction = 'toggle-tools' | 'pick-model' | 'cycle-thinking'

/** The pane's action for a key press, or undefined: Ctrl (not Alt, Shift or Meta) + O or L. */
export function paneAction(e: KeyboardEvent): PaneAction | undefined {
  if (!e.ctrlKey || e.altKey || e.shiftKey || e.metaKey || e.isComposing) return undefined
  const key = e.key.toLowerCase()
  if (key === 'o') return 'toggle-tools'
  if (key === 'l') return 'pick-model'
  return undefined
}

/** What the composer asks the pane: cancelled (`preventDefault`) when the pane did it, so the key does nothing else. */
export const paneRequest = (action: PaneAction) => new CustomEvent<PaneAction>('pane-action', { bubbles: true, composed: true, cancelable: true, detail: action })
