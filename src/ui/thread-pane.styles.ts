/** How <thread-pane> looks. */
import { css } from 'lit'
import { tokens, controls } from './styles.js'
import { NOTE_MS } from './thread-store.js'

export const threadPaneStyles = [
  tokens,
  controls,
  css`
    :host {
      display: flex;
      flex-direction: column;
      min-height: 0;
      height: 100%;
      background: var(--th-bg);
      position: relative;
    }
    .scroll-area {
      flex: 1;
      min-height: 0;
      position: relative;
      display: flex;
      flex-direction: column;
    }
    .scroll {
      flex: 1;
      overflow-y: auto;
      min-height: 0;
    }
    .jump {
      position: absolute;
      bottom: 0.75rem;
      left: 50%;
      transform: translateX(-50%);
      border-radius: 999px;
      box-shadow: var(--th-shadow);
      z-index: 1;
    }
    .scroll:focus-visible {
      outline: 2px solid var(--th-accent);
      outline-offset: -2px;
    }
    .column {
      max-width: 48rem;
      margin: 0 auto;
      padding: 0 1.25rem;
    }
    .dialogs {
      display: grid;
      grid-template-columns: minmax(0, 1fr);
      gap: 0.75rem;
      padding: 0.5rem 0 1rem;
    }
    .note {
      font-size: 0.85rem;
      color: var(--th-fg-soft);
      border: 1px solid var(--th-border);
      border-radius: 10px;
      padding: 0.5rem 0.75rem;
      display: flex;
      gap: 0.5rem;
      align-items: center;
      animation: fade ${NOTE_MS}ms ease-in forwards;
    }
    .note strong {
      color: var(--th-fg);
      font-weight: 600;
    }
    .note span {
      flex: 1;
    }
    .note button {
      padding: 0 0.4rem;
    }
    @keyframes fade {
      0%,
      80% {
        opacity: 1;
      }
      100% {
        opacity: 0.3;
      }
    }
    .foot {
      padding: 0.5rem 0 1rem;
    }
    .widgets {
      display: grid;
      gap: 0.4rem;
      margin-bottom: 0.5rem;
    }
    .widgets.below {
      margin: 0.5rem 0 0;
    }
    .widget {
      margin: 0;
      padding: 0.4rem 0.75rem;
      border: 1px solid var(--th-border);
      border-radius: 10px;
      background: var(--th-bg-soft);
      font-family: var(--th-mono);
      font-size: 0.8rem;
      line-height: 1.4;
      white-space: pre-wrap;
      overflow-wrap: anywhere;
      max-height: 10rem;
      overflow-y: auto;
    }
    .chips {
      display: flex;
      flex-wrap: wrap;
      gap: 0.35rem;
      margin: 0 0 0.5rem;
      padding: 0;
      list-style: none;
    }
    .chips li {
      font-size: 0.75rem;
      padding: 0.1rem 0.55rem;
      border: 1px solid var(--th-border);
      border-radius: 999px;
      color: var(--th-fg-soft);
      background: var(--th-bg-soft);
      max-width: 100%;
      overflow: hidden;
      text-overflow: ellipsis;
      white-space: nowrap;
    }
    @media (max-width: 720px) {
      .column {
        padding: 0 0.8rem;
      }
    }
  `
]
