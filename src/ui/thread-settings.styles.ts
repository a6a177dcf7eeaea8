/** How <thread-settings> looks: one quiet row under the thread's title. */
import { css } from 'lit'
import { controls, tokens } from './styles.js'

export const threadSettingsStyles = [
  tokens,
  controls,
  css`
    :host {
      display: block;
    }
    .settings {
      display: flex;
      flex-wrap: wrap;
      align-items: center;
      gap: 0.35rem 1rem;
      padding: 0.35rem 1.25rem;
      border-bottom: 1px solid var(--th-border);
      font-size: 0.8rem;
      color: var(--th-fg-soft);
    }
    .settings .field {
      display: inline-flex;
      align-items: center;
      gap: 0.35rem;
      min-width: 0;
    }
    .settings .value {
      color: var(--th-fg);
    }
    .settings select {
      font: inherit;
      color: var(--th-fg);
      background: var(--th-bg);
      border: 1px solid var(--th-border);
      border-radius: 8px;
      padding: 0.15rem 0.35rem;
      max-width: 16rem;
    }
    .settings select:focus-visible {
      outline: 2px solid var(--th-accent);
      outline-offset: 1px;
    }
    .settings select:disabled {
      opacity: 0.6;
    }
    .settings .folder {
      flex: 0 1 auto;
    }
    .settings .folder .value {
      font-family: var(--th-mono);
      overflow: hidden;
      text-overflow: ellipsis;
      white-space: nowrap;
    }
    .settings .config-error {
      color: var(--th-danger);
    }
    /* What the pane puts at the row's end (its keyboard help). */
    ::slotted(*) {
      margin-left: auto;
    }
    @media (max-width: 720px) {
      .settings {
        padding: 0.35rem 0.8rem;
      }
    }
  `,
]
