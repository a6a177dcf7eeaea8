/** How <toast-stack> looks: over the pane's top right corner, never in the way of a click beside it. */
import { css } from 'lit'
import { controls, tokens } from './styles.js'

export const toastStackStyles = [
  tokens,
  controls,
  css`
    /* Placed against the pane, not against this element. */
    :host {
      display: contents;
    }
    .toasts {
      position: absolute;
      /* Below the header and its settings row, so a toast never covers the model picker. */
      top: 6rem;
      right: 1rem;
      z-index: 2;
      display: grid;
      gap: 0.4rem;
      width: min(22rem, calc(100% - 2rem));
      pointer-events: none;
    }
    .toast {
      pointer-events: auto;
      display: flex;
      gap: 0.5rem;
      align-items: flex-start;
      padding: 0.55rem 0.75rem;
      border: 1px solid var(--th-border);
      border-left: 4px solid var(--th-accent);
      border-radius: 10px;
      background: var(--th-bg);
      box-shadow: var(--th-shadow);
      font-size: 0.875rem;
      overflow-wrap: anywhere;
    }
    .toast.warning {
      border-left-color: var(--th-warn);
    }
    .toast.error {
      border-left-color: var(--th-danger);
    }
    .toast span {
      flex: 1;
    }
    .toast button {
      padding: 0 0.4rem;
    }
  `,
]
