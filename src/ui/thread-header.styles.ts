/** How <thread-header> looks: the title row, then what is said about the thread under it. */
import { css } from 'lit'
import { controls, tokens } from './styles.js'

export const threadHeaderStyles = [
  tokens,
  controls,
  css`
    :host {
      display: block;
    }
    header {
      display: flex;
      align-items: center;
      gap: 0.6rem;
      padding: 0.7rem 1.25rem;
      border-bottom: 1px solid var(--th-border);
      min-height: 3.25rem;
      box-sizing: border-box;
    }
    header h2 {
      flex: 1 1 auto;
      min-width: 4rem;
      margin: 0;
      font-size: 1rem;
      font-weight: 600;
      overflow: hidden;
      text-overflow: ellipsis;
      white-space: nowrap;
      min-width: 0;
    }
    header .grow {
      flex: 1;
    }
    header a.inspect {
      color: var(--th-fg-soft);
      font-size: 0.875rem;
      padding: 0.4rem 0.5rem;
      border-radius: 8px;
    }
    /* The inspector is a wide-screen tool; on a phone the title needs the room. */
    @media (max-width: 720px) {
      header a.inspect {
        display: none;
      }
    }
    header form {
      display: flex;
      gap: 0.4rem;
      flex: 1;
    }
    header form input {
      flex: 1;
      min-width: 0;
      padding: 0.3rem 0.55rem;
    }
    .back {
      display: none;
      text-decoration: none;
      color: var(--th-accent);
      font-size: 1.2rem;
    }
    .confirm-delete {
      display: flex;
      align-items: center;
      gap: 0.6rem;
      padding: 0.6rem 1.25rem;
      background: var(--th-danger-soft);
      color: var(--th-danger);
      font-size: 0.9rem;
    }
    .confirm-delete span {
      flex: 1;
    }
    .header-error {
      padding: 0.4rem 1.25rem;
      color: var(--th-danger);
      font-size: 0.85rem;
    }
    .titles {
      flex: 1 1 auto;
      min-width: 0;
      display: grid;
    }
    .titles .subtitle {
      margin: 0;
      font-size: 0.78rem;
      color: var(--th-fg-soft);
      overflow: hidden;
      text-overflow: ellipsis;
      white-space: nowrap;
    }
    .totals {
      display: flex;
      align-items: center;
      gap: 0.5rem;
      margin: 0;
      padding: 0 1.25rem 0.4rem;
      font-size: 0.75rem;
      color: var(--th-fg-soft);
      font-variant-numeric: tabular-nums;
    }
    .totals meter {
      width: 5rem;
      height: 0.5rem;
    }
    .context-warning {
      display: flex;
      align-items: center;
      flex-wrap: wrap;
      gap: 0.6rem;
      margin: 0 1.25rem 0.5rem;
      padding: 0.45rem 0.75rem;
      border-radius: 8px;
      font-size: 0.85rem;
      background: var(--th-warn-soft);
      color: var(--th-warn);
    }
    @media (max-width: 720px) {
      .back {
        display: inline;
      }
      header {
        padding: 0.6rem 0.8rem;
      }
    }
    .visually-hidden {
      position: absolute;
      width: 1px;
      height: 1px;
      overflow: hidden;
      clip-path: inset(50%);
      white-space: nowrap;
    }
  `,
]
