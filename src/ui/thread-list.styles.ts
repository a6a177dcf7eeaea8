/** How <thread-list> looks. */
import { css } from 'lit'
import { tokens, controls } from './styles.js'

export const threadListStyles = [
  tokens,
  controls,
  css`
    :host {
      display: flex;
      flex-direction: column;
      min-height: 0;
      height: 100%;
      background: var(--th-bg-soft);
    }
    .top {
      display: flex;
      align-items: center;
      gap: 0.5rem;
      padding: 0.7rem 0.9rem;
      min-height: 3.25rem;
      box-sizing: border-box;
      border-bottom: 1px solid var(--th-border);
    }
    /* Off screen until the keyboard reaches it: the first Tab stop of the page. */
    .skip {
      position: absolute;
      left: 0.5rem;
      top: -3rem;
      z-index: 10;
      padding: 0.5rem 0.75rem;
      border-radius: 8px;
      background: var(--th-accent);
      color: var(--th-accent-fg);
      text-decoration: none;
    }
    .skip:focus {
      top: 0.5rem;
    }
    .brand {
      margin: 0;
      font-size: 1rem;
      font-weight: 700;
      letter-spacing: -0.01em;
      flex: 1;
      display: flex;
      align-items: center;
      gap: 0.45rem;
    }
    .logo {
      width: 1.35rem;
      height: 1.35rem;
      border-radius: 6px;
      background: linear-gradient(135deg, var(--th-accent), #06b6d4);
    }
    nav {
      flex: 1;
      overflow-y: auto;
      padding: 0.5rem;
    }
    ul {
      list-style: none;
      margin: 0;
      padding: 0;
      display: grid;
      gap: 2px;
    }
    a {
      display: grid;
      grid-template-columns: auto 1fr auto;
      align-items: center;
      column-gap: 0.6rem;
      padding: 0.55rem 0.65rem;
      border-radius: 8px;
      color: inherit;
      text-decoration: none;
    }
    a:hover {
      background: var(--th-bg-sunk);
    }
    a[aria-current='page'] {
      background: var(--th-accent-soft);
    }
    .title {
      font-size: 0.9rem;
      font-weight: 500;
      overflow: hidden;
      text-overflow: ellipsis;
      white-space: nowrap;
    }
    .sub {
      grid-column: 2 / 4;
      font-size: 0.75rem;
      color: var(--th-fg-soft);
    }
    .preview {
      grid-column: 2 / 4;
      font-size: 0.78rem;
      color: var(--th-fg-soft);
      overflow: hidden;
      text-overflow: ellipsis;
      white-space: nowrap;
    }
    .preview.hit {
      white-space: normal;
      display: -webkit-box;
      -webkit-line-clamp: 2;
      -webkit-box-orient: vertical;
    }
    mark {
      background: var(--th-warn-soft);
      color: var(--th-fg);
      font-weight: 600;
      border-radius: 2px;
    }
    .group h2 {
      margin: 0.75rem 0.65rem 0.25rem;
      font-size: 0.7rem;
      font-weight: 600;
      letter-spacing: 0.04em;
      text-transform: uppercase;
      color: var(--th-fg-soft);
    }
    .dot {
      width: 0.5rem;
      height: 0.5rem;
      border-radius: 50%;
      background: var(--th-border);
      grid-row: span 2;
    }
    .dot.live {
      background: var(--th-ok);
    }
    .dot.damaged {
      background: var(--th-danger);
    }
    .dot.busy {
      background: var(--th-accent);
      box-shadow: 0 0 0 3px var(--th-accent-soft);
      animation: pulse 1.2s ease-in-out infinite;
    }
    @keyframes pulse {
      50% {
        opacity: 0.4;
      }
    }
    .badge {
      font-size: 0.7rem;
      font-weight: 700;
      min-width: 1.2rem;
      text-align: center;
      padding: 0.05rem 0.35rem;
      border-radius: 999px;
      background: var(--th-warn);
      color: var(--th-bg);
    }
    .search {
      padding: 0.5rem 0.5rem 0;
    }
    .search input {
      width: 100%;
      font: inherit;
      font-size: 0.85rem;
      color: var(--th-fg);
      background: var(--th-bg);
      border: 1px solid var(--th-border);
      border-radius: 8px;
      padding: 0.4rem 0.6rem;
      box-sizing: border-box;
    }
    .search input:focus-visible,
    li input:focus-visible {
      outline: 2px solid var(--th-accent);
      outline-offset: 1px;
    }
    a.inbox {
      display: flex;
      justify-content: space-between;
      margin: 0 0 0.4rem;
      font-size: 0.85rem;
      font-weight: 500;
    }
    a.inbox .none {
      font-size: 0.75rem;
      color: var(--th-fg-soft);
    }
    li.thread {
      position: relative;
    }
    .actions {
      position: absolute;
      top: 0.35rem;
      right: 0.35rem;
      display: flex;
      gap: 2px;
      opacity: 0;
      padding: 0.1rem;
      border-radius: 8px;
      background: var(--th-bg-sunk);
    }
    /* Over the badge while the pointer or the keyboard is on the thread (the pane has them too). */
    li.thread:hover .actions,
    li.thread:focus-within .actions {
      opacity: 1;
    }
    /* A touch screen has no hover to reveal them: an invisible button would still take a tap. */
    @media (hover: none) {
      .actions {
        opacity: 1;
      }
      li.thread a {
        padding-right: 7.5rem;
      }
    }
    .actions button {
      font-size: 0.72rem;
      padding: 0.1rem 0.35rem;
      background: var(--th-bg);
    }
    li.editing,
    li.confirm {
      padding: 0.45rem 0.55rem;
      border-radius: 8px;
      background: var(--th-bg);
      border: 1px solid var(--th-border);
      display: grid;
      gap: 0.35rem;
      font-size: 0.85rem;
    }
    li.confirm {
      background: var(--th-danger-soft);
      color: var(--th-danger);
    }
    li form,
    li .row {
      display: flex;
      gap: 0.3rem;
    }
    li form input {
      flex: 1;
      min-width: 0;
      font-size: 0.85rem;
      padding: 0.25rem 0.45rem;
    }
    li .row button,
    li form button {
      font-size: 0.78rem;
      padding: 0.2rem 0.5rem;
    }
    .empty,
    .error {
      padding: 1rem;
      font-size: 0.85rem;
      color: var(--th-fg-soft);
    }
    .error {
      color: var(--th-danger);
    }
  `
]
