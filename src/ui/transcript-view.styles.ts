/** How <transcript-view> looks. */
import { css } from 'lit'
import { tokens, controls, codeTheme } from './styles.js'

export const transcriptViewStyles = [
  tokens,
  controls,
  codeTheme,
  css`
    :host {
      display: block;
    }
    [role='log'] {
      display: flex;
      flex-direction: column;
      gap: 0.75rem;
      padding: 1.25rem 0 0.5rem;
    }
    .empty {
      color: var(--th-fg-soft);
      text-align: center;
      padding: 3rem 1rem;
    }
    .empty strong {
      display: block;
      color: var(--th-fg);
      font-size: 1.1rem;
      margin-bottom: 0.25rem;
    }
    .user {
      align-self: flex-end;
      max-width: min(80%, 42rem);
      background: var(--th-user-bg);
      color: var(--th-user-fg);
      padding: 0.55rem 0.9rem;
      border-radius: 18px 18px 4px 18px;
      white-space: pre-wrap;
      overflow-wrap: anywhere;
      line-height: 1.45;
    }
    .user .thumbs {
      display: flex;
      flex-wrap: wrap;
      gap: 0.35rem;
      margin-top: 0.4rem;
    }
    .user .thumbs img {
      width: 6rem;
      height: 6rem;
      object-fit: cover;
      border-radius: 10px;
      background: var(--th-bg);
    }
    .user.pending {
      opacity: 0.6;
      background: transparent;
      color: var(--th-fg);
      border: 1px dashed var(--th-border);
    }
    .tag {
      display: block;
      font-size: 0.72rem;
      opacity: 0.85;
      margin-top: 0.2rem;
      text-align: right;
    }
    .assistant {
      align-self: stretch;
      line-height: 1.6;
      overflow-wrap: anywhere;
    }
    .assistant > :first-child {
      margin-top: 0;
    }
    .assistant > :last-child {
      margin-bottom: 0;
    }
    .assistant pre {
      background: var(--th-bg-sunk);
      border: 1px solid var(--th-border);
      border-radius: 8px;
      padding: 0.75rem 0.9rem;
      overflow-x: auto;
      font-size: 0.85rem;
      line-height: 1.45;
    }
    .assistant code {
      font-family: var(--th-mono);
      font-size: 0.88em;
    }
    .assistant :not(pre) > code {
      background: var(--th-bg-sunk);
      padding: 0.1em 0.35em;
      border-radius: 4px;
    }
    .assistant a {
      color: var(--th-accent);
    }
    .assistant table {
      border-collapse: collapse;
    }
    .assistant th,
    .assistant td {
      border: 1px solid var(--th-border);
      padding: 0.3rem 0.6rem;
    }
    .assistant blockquote {
      margin: 0;
      padding-left: 0.9rem;
      border-left: 3px solid var(--th-border);
      color: var(--th-fg-soft);
    }
    .cursor {
      display: inline-block;
      width: 0.5em;
      height: 1em;
      vertical-align: text-bottom;
      background: var(--th-accent);
      border-radius: 2px;
      animation: blink 1s steps(2) infinite;
    }
    .thinking {
      color: var(--th-fg-soft);
      font-size: 0.9rem;
    }
    /* A message brought into view (a search hit opened): marked for a moment. */
    .revealed {
      outline: 2px solid var(--th-accent, currentColor);
      outline-offset: 2px;
    }
    @keyframes blink {
      50% {
        opacity: 0;
      }
    }
    details.tool {
      border: 1px solid var(--th-border);
      border-radius: 10px;
      background: var(--th-bg-soft);
      font-size: 0.875rem;
    }
    details.tool summary {
      display: flex;
      align-items: center;
      gap: 0.5rem;
      padding: 0.5rem 0.75rem;
      cursor: pointer;
      list-style: none;
    }
    details.tool summary::-webkit-details-marker {
      display: none;
    }
    details.tool summary::before {
      content: '▸';
      color: var(--th-fg-soft);
      transition: transform 120ms;
    }
    details.tool[open] summary::before {
      transform: rotate(90deg);
    }
    .tool-name {
      font-family: var(--th-mono);
      font-weight: 600;
    }
    .tool-args {
      font-family: var(--th-mono);
      color: var(--th-fg-soft);
      overflow: hidden;
      text-overflow: ellipsis;
      white-space: nowrap;
      flex: 1;
      min-width: 0;
    }
    .state {
      font-size: 0.75rem;
      padding: 0.1rem 0.5rem;
      border-radius: 999px;
      border: 1px solid currentColor;
      white-space: nowrap;
    }
    .state.running {
      color: var(--th-accent);
    }
    .state.unknown {
      color: var(--th-fg-soft);
      border-style: dashed;
    }
    .state.done {
      color: var(--th-ok);
    }
    .state.error {
      color: var(--th-danger);
    }
    .tool-body {
      padding: 0 0.75rem 0.75rem;
    }
    .tool-body h3 {
      margin: 0.5rem 0 0.25rem;
      font-size: 0.75rem;
      text-transform: uppercase;
      letter-spacing: 0.04em;
      color: var(--th-fg-soft);
    }
    .tool-body pre {
      margin: 0;
      background: var(--th-bg);
      border: 1px solid var(--th-border);
      border-radius: 6px;
      padding: 0.5rem 0.65rem;
      font-family: var(--th-mono);
      font-size: 0.8rem;
      white-space: pre-wrap;
      overflow-wrap: anywhere;
      max-height: 20rem;
      overflow: auto;
    }
    .tool-body .tool-note {
      margin: 0.3rem 0 0;
      color: var(--th-fg-soft);
      font-size: 0.75rem;
    }
    .custom {
      align-self: stretch;
      white-space: pre-wrap;
      padding: 0.5rem 0.8rem;
      border: 1px solid var(--th-border);
      border-radius: 10px;
      background: var(--th-bg-soft);
    }
    .custom .label {
      display: block;
      font-family: var(--th-mono);
      font-size: 0.72rem;
      color: var(--th-fg-soft);
      margin-bottom: 0.2rem;
    }
    .notify {
      align-self: center;
      font-size: 0.85rem;
      padding: 0.35rem 0.8rem;
      border-radius: 999px;
      background: var(--th-bg-sunk);
      color: var(--th-fg-soft);
    }
    .notify.warning {
      background: var(--th-warn-soft);
      color: var(--th-warn);
    }
    .thought {
      align-self: flex-start;
      max-width: 100%;
      font-size: 0.85rem;
      color: var(--th-fg-soft);
    }
    .thought summary {
      cursor: pointer;
      width: fit-content;
      padding: 0.1rem 0.2rem;
      border-radius: 4px;
    }
    .thought-text {
      margin: 0.3rem 0 0 0.2rem;
      padding-left: 0.75rem;
      border-left: 2px solid var(--th-border);
      white-space: pre-wrap;
      overflow-wrap: anywhere;
      line-height: 1.5;
    }
    .retry {
      align-self: flex-start;
      font-size: 0.85rem;
      padding: 0.35rem 0.8rem;
      border-radius: 8px;
      background: var(--th-warn-soft);
      color: var(--th-warn);
      overflow-wrap: anywhere;
    }
    .retry.recovered {
      background: var(--th-bg-sunk);
      color: var(--th-fg-soft);
    }
    .error .attempts {
      font-size: 0.8rem;
    }
    .notify.error,
    .error {
      background: var(--th-danger-soft);
      color: var(--th-danger);
    }
    .error,
    .rejected {
      padding: 0.5rem 0.8rem;
      border-radius: 8px;
      font-size: 0.875rem;
    }
    .rejected {
      align-self: flex-end;
      max-width: min(80%, 42rem);
      background: var(--th-warn-soft);
      color: var(--th-warn);
      overflow-wrap: anywhere;
    }
    .rejected .text {
      display: block;
      margin-top: 0.2rem;
      white-space: pre-wrap;
      color: var(--th-fg);
    }
    .stopped {
      display: flex;
      align-items: center;
      gap: 0.6rem;
      color: var(--th-danger);
      font-size: 0.8rem;
      font-weight: 600;
      text-transform: uppercase;
      letter-spacing: 0.05em;
    }
    .stopped::before,
    .stopped::after {
      content: '';
      flex: 1;
      border-top: 1px solid currentColor;
      opacity: 0.35;
    }
    .meta {
      display: flex;
      align-items: center;
      gap: 0.4rem;
      margin-top: -0.5rem;
      font-size: 0.72rem;
      color: var(--th-fg-soft);
      min-height: 1.2rem;
    }
    .meta.end {
      align-self: flex-end;
    }
    .meta .usage {
      font-variant-numeric: tabular-nums;
    }
    .meta.start {
      align-self: flex-start;
    }
    .meta button,
    .code-block .copy-code,
    button.fold {
      font-size: 0.72rem;
      padding: 0.05rem 0.45rem;
      color: var(--th-fg-soft);
    }
    .code-block {
      position: relative;
    }
    .code-block .copy-code {
      position: absolute;
      top: 0.35rem;
      right: 0.35rem;
      background: var(--th-bg);
    }
    .assistant .code-block pre {
      padding-right: 4rem;
    }
    .code-block .code-lang {
      position: absolute;
      top: 0.45rem;
      right: 4.1rem;
      font-family: var(--th-mono);
      font-size: 0.72rem;
      color: var(--th-fg-soft);
    }
    .assistant .code-block:has(.code-lang) pre {
      padding-top: 1.6rem;
    }
    .tools-toggle {
      display: flex;
      justify-content: flex-end;
      margin-top: 0.5rem;
    }
    .tools-toggle button {
      font-size: 0.75rem;
      color: var(--th-fg-soft);
    }
    .code-block pre:focus-visible,
    .tool-body pre:focus-visible {
      outline: 2px solid var(--th-accent, currentColor);
      outline-offset: 1px;
    }
    .empty .demo-intro {
      margin: 1rem 0 0.5rem;
    }
    .empty .examples {
      list-style: none;
      margin: 0 auto;
      padding: 0;
      display: flex;
      flex-wrap: wrap;
      justify-content: center;
      gap: 0.4rem;
      max-width: 36rem;
    }
    .empty .demo-more {
      font-size: 0.8rem;
      margin: 0.75rem 0 0;
    }
    kbd {
      font-family: var(--th-mono);
      border: 1px solid var(--th-border);
      border-radius: 4px;
      padding: 0 0.3rem;
    }
    .tool-args code {
      font-family: var(--th-mono);
      color: var(--th-fg);
    }
    .tool-args .range {
      color: var(--th-fg-soft);
    }
    .tool-args time,
    summary time {
      font-size: 0.72rem;
      color: var(--th-fg-soft);
    }
    .tool-body pre.terminal {
      background: #16181d;
      color: #e6e8ec;
      border-color: #16181d;
    }
    .tool-body pre.diff {
      white-space: pre;
      overflow-x: auto;
    }
    .diff .line {
      display: block;
    }
    .diff .del {
      background: var(--th-danger-soft);
      color: var(--th-danger);
    }
    .diff .add {
      background: var(--th-ok-soft);
      color: var(--th-ok);
    }
    button.fold {
      margin-top: 0.3rem;
      border-color: var(--th-border);
    }
  `
]
