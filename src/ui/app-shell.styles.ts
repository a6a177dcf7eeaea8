/** How <app-shell> looks. */
import { css } from 'lit'
import { tokens, controls } from './styles.js'

export const appShellStyles = [
  tokens,
  controls,
  css`
    :host {
      display: grid;
      grid-template-columns: 18rem 1fr;
      height: 100vh;
      height: 100dvh;
      background: var(--th-bg);
    }
    :host([inspecting]) {
      grid-template-columns: 1fr;
    }
    thread-list {
      border-right: 1px solid var(--th-border);
      min-height: 0;
    }
    main {
      min-width: 0;
      min-height: 0;
      display: flex;
      flex-direction: column;
    }
    /* The extension notice (when there is one) above; the pane or the page below takes the rest. */
    main > :not(extension-notice) {
      flex: 1;
      min-height: 0;
      height: auto;
    }
    .welcome {
      height: 100%;
      display: grid;
      place-content: center;
      text-align: center;
      gap: 0.75rem;
      color: var(--th-fg-soft);
      padding: 2rem;
    }
    .welcome h1 {
      margin: 0;
      font-size: 1.5rem;
      color: var(--th-fg);
    }
    .welcome p {
      margin: 0 0 0.5rem;
    }
    .questions {
      max-width: 40rem;
      margin: 0 auto;
      padding: 2rem 1.25rem;
    }
    .questions h1 {
      font-size: 1.3rem;
      margin: 0 0 1rem;
    }
    .questions ul {
      list-style: none;
      margin: 0 0 1.5rem;
      padding: 0;
      display: grid;
      gap: 0.5rem;
    }
    .questions li a {
      display: flex;
      justify-content: space-between;
      gap: 1rem;
      padding: 0.7rem 0.9rem;
      border: 1px solid var(--th-border);
      border-radius: 10px;
      color: inherit;
      text-decoration: none;
    }
    .questions li a:hover {
      background: var(--th-bg-soft);
    }
    .questions .q-title {
      /* The thread's heading over its question cards (h3), as a line of the list. */
      margin: 0;
      font-size: 1rem;
      font-weight: 600;
      overflow: hidden;
      text-overflow: ellipsis;
      white-space: nowrap;
    }
    .questions .q-count {
      color: var(--th-warn);
      white-space: nowrap;
    }
    .questions li thread-questions {
      margin-top: 0.5rem;
    }
    .questions .notify {
      display: flex;
      flex-wrap: wrap;
      gap: 0.5rem;
      align-items: center;
      color: var(--th-fg-soft);
      font-size: 0.85rem;
    }
    .welcome .notice {
      padding: 0.5rem 0.75rem;
      border-radius: 8px;
      background: var(--th-bg-soft);
      color: var(--th-fg);
    }
    main:focus {
      outline: none;
    }
    .visually-hidden {
      position: absolute;
      width: 1px;
      height: 1px;
      overflow: hidden;
      clip-path: inset(50%);
      white-space: nowrap;
    }
    .not-found {
      max-width: 36rem;
      margin: 0 auto;
      padding: 3rem 1.25rem;
    }
    .not-found h1 {
      font-size: 1.4rem;
      margin: 0 0 0.75rem;
    }
    .not-found p {
      color: var(--th-fg-soft);
      overflow-wrap: anywhere;
    }
    .not-found .ways {
      display: flex;
      gap: 1rem;
      align-items: center;
    }
    @media (max-width: 720px) {
      :host {
        grid-template-columns: 1fr;
      }
      :host([has-thread]) thread-list {
        display: none;
      }
      :host(:not([has-thread]):not([inspecting])) main {
        display: none;
      }
      thread-list {
        border-right: 0;
      }
    }
  `
]
