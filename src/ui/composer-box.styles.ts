/** How <composer-box> looks. */
import { css } from 'lit'
import { tokens, controls } from './styles.js'

export const composerBoxStyles = [
  tokens,
  controls,
  css`
    :host {
      display: block;
    }
    .queue {
      margin: 0 0 0.5rem;
      padding: 0.5rem 0.75rem;
      list-style: none;
      border: 1px dashed var(--th-border);
      border-radius: 10px;
      background: var(--th-bg-soft);
      display: grid;
      gap: 0.3rem;
      font-size: 0.85rem;
    }
    .queue li {
      display: flex;
      gap: 0.5rem;
      align-items: baseline;
      min-width: 0;
    }
    .queue .kind {
      font-size: 0.7rem;
      font-weight: 600;
      text-transform: uppercase;
      letter-spacing: 0.04em;
      color: var(--th-accent);
      flex: none;
    }
    .queue .text {
      overflow: hidden;
      text-overflow: ellipsis;
      white-space: nowrap;
    }
    .commands {
      margin: 0 0 0.4rem;
      padding: 0.3rem;
      list-style: none;
      border: 1px solid var(--th-border);
      border-radius: 10px;
      background: var(--th-bg);
      box-shadow: var(--th-shadow);
      max-height: 16rem;
      overflow-y: auto;
      font-size: 0.875rem;
    }
    .commands li {
      display: flex;
      gap: 0.75rem;
      align-items: baseline;
      padding: 0.3rem 0.55rem;
      border-radius: 6px;
      cursor: pointer;
    }
    .commands li[aria-selected='true'] {
      background: var(--th-accent-soft);
    }
    .commands .name {
      font-family: var(--th-mono);
      font-weight: 600;
      flex: none;
    }
    .commands .desc {
      color: var(--th-fg-soft);
      overflow: hidden;
      text-overflow: ellipsis;
      white-space: nowrap;
      min-width: 0;
    }
    .box {
      border: 1px solid var(--th-border);
      border-radius: 16px;
      background: var(--th-bg);
      box-shadow: var(--th-shadow);
      padding: 0.5rem 0.5rem 0.5rem 0.9rem;
      display: flex;
      gap: 0.5rem;
      align-items: flex-end;
    }
    .box {
      /* The attach button takes the box's left padding (the text keeps its room on a phone). */
      padding-left: 0.3rem;
    }
    .attach {
      position: relative;
      display: inline-grid;
      place-items: center;
      width: 1.6rem;
      height: 2rem;
      margin-right: -0.25rem;
      flex: none;
      border-radius: 999px;
      color: var(--th-fg-soft);
      cursor: pointer;
      font-size: 1.25rem;
    }
    .attach:hover {
      background: var(--th-bg-soft);
    }
    .attach:focus-within {
      outline: 2px solid var(--th-accent);
    }
    .attach input {
      position: absolute;
      inset: 0;
      opacity: 0;
      width: 100%;
      cursor: pointer;
    }
    .attachments {
      list-style: none;
      margin: 0 0 0.4rem;
      padding: 0;
      display: flex;
      flex-wrap: wrap;
      gap: 0.4rem;
    }
    .attachments li {
      position: relative;
    }
    .attachments img {
      display: block;
      width: 4rem;
      height: 4rem;
      object-fit: cover;
      border-radius: 8px;
      border: 1px solid var(--th-border);
    }
    .attachments button {
      position: absolute;
      top: -0.4rem;
      right: -0.4rem;
      padding: 0 0.35rem;
      border-radius: 999px;
      background: var(--th-bg);
    }
    .box:focus-within {
      border-color: var(--th-accent);
    }
    textarea {
      flex: 1;
      border: 0;
      outline: none !important;
      resize: none;
      padding: 0.4rem 0;
      max-height: 14rem;
      min-height: 1.5rem;
      line-height: 1.5;
      background: transparent;
    }
    .buttons {
      display: flex;
      gap: 0.4rem;
    }
    .buttons button {
      border-radius: 10px;
      padding: 0.45rem 0.95rem;
    }
    .row {
      display: flex;
      align-items: center;
      gap: 0.75rem;
      margin-top: 0.4rem;
      min-height: 1.6rem;
      font-size: 0.78rem;
      color: var(--th-fg-soft);
    }
    .seg {
      display: inline-flex;
      border: 1px solid var(--th-border);
      border-radius: 8px;
      overflow: hidden;
    }
    .seg label {
      position: relative;
      padding: 0.15rem 0.6rem;
      cursor: pointer;
    }
    .seg label:has(input:checked) {
      background: var(--th-accent-soft);
      color: var(--th-accent);
      font-weight: 600;
    }
    .seg input {
      position: absolute;
      inset: 0;
      margin: 0;
      width: 100%;
      height: 100%;
      opacity: 0;
      cursor: pointer;
    }
    .seg label:has(input:focus-visible) {
      outline: 2px solid var(--th-accent);
    }
    .error {
      color: var(--th-danger);
    }
    .row {
      flex-wrap: wrap;
    }
    .row > .notice,
    .row > .error {
      white-space: normal;
      min-width: 0;
      overflow-wrap: anywhere;
    }
    .hint {
      margin-left: auto;
    }
    .row > span {
      white-space: nowrap;
    }
    @media (max-width: 600px) {
      .hint {
        display: none;
      }
    }
  `
]
