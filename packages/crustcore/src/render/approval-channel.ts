/**
 * The human side of approvals. `--approve auto` answers only what policy lets
 * it (never a request marked `requiresHuman`); `ask` shows the kernel's own
 * description of the operation — never the model's words — with the diff,
 * risks and verify evidence, and takes an explicit yes; `deny`, no terminal,
 * end of input or a timeout are denials.
 */
import { createInterface } from 'node:readline';
import type { ApprovalChannel, ApprovalContext, ApprovalRequest } from '@crustcore/runtime';
import { hasHiddenCharacters, sanitizeForTerminal, sanitizeName } from '@crustcore/runtime';
import type { Style } from '../cli/output.js';

export interface TerminalIo {
  readonly input: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly output: NodeJS.WritableStream & { isTTY?: boolean };
  readonly style: Style;
}

const MAX_DIFF_LINES = 80;

export function renderApprovalPrompt(request: ApprovalRequest, context: ApprovalContext, style: Style): string {
  const lines: string[] = [];
  lines.push('');
  lines.push(style.bold('Approval needed'));
  lines.push(`  operation : ${sanitizeForTerminal(request.description)}`);
  lines.push(`  approval  : ${request.approvalId} (bound to operation ${request.opHash.slice(0, 16)}…)`);
  if (context.toolCall !== undefined) {
    lines.push(`  tool      : ${sanitizeForTerminal(context.toolCall.tool)}`);
    lines.push(`  arguments : ${sanitizeForTerminal(context.toolCall.arguments)}`);
  }
  if (context.evidence) lines.push(`  evidence  : ${sanitizeForTerminal(context.evidence)}`);
  if (request.risks.length) lines.push(`  risks     : ${style.yellow(request.risks.join(', '))}`);
  if (context.files.length) {
    lines.push('  files     :');
    for (const f of context.files.slice(0, 40))
      lines.push(`    ${f.status.padEnd(2)} ${sanitizeName(f.path)} ${style.dim(`(${f.fileClass})`)}`);
    if (context.files.length > 40) lines.push(`    … ${context.files.length - 40} more`);
  }
  if (context.diffText) {
    if (hasHiddenCharacters(context.diffText)) {
      lines.push(
        style.yellow(
          '  warning   : the diff contains control, bidirectional or zero-width characters (shown as \\u{…})',
        ),
      );
    }
    const diffLines = sanitizeForTerminal(context.diffText).split('\n');
    lines.push('  diff      :');
    for (const l of diffLines.slice(0, MAX_DIFF_LINES)) lines.push(`    ${colorDiffLine(l, style)}`);
    if (diffLines.length > MAX_DIFF_LINES)
      lines.push(
        style.dim(
          `    … ${diffLines.length - MAX_DIFF_LINES} more lines not shown here. ${seeWholePatch(request.taskId)}`,
        ),
      );
  }
  return lines.join('\n');
}

/** How to see what a shortened view left out: the whole view, or the exact bytes. */
export const seeWholePatch = (taskId: string): string =>
  `See the whole patch: crustcore diff ${taskId}; the exact bytes: crustcore diff ${taskId} --export FILE`;

/** Colours one line of a patch view (no-op styles off a terminal). */
export function colorDiffLine(line: string, style: Style): string {
  if (line.startsWith('warning: ')) return style.yellow(line);
  if (line.startsWith('+') && !line.startsWith('+++')) return style.green(line);
  if (line.startsWith('-') && !line.startsWith('---')) return style.red(line);
  if (line.startsWith('@@')) return style.cyan(line);
  if (line.startsWith('diff --git ')) return style.bold(line);
  return line;
}

/** Reads one line; resolves to null on end of input or timeout. */
function readLine(io: TerminalIo, question: string, timeoutMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: io.input, output: io.output, terminal: false });
    let settled = false;
    const done = (value: string | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      rl.close();
      resolve(value);
    };
    const timer = setTimeout(() => done(null), timeoutMs);
    io.output.write(question);
    rl.once('line', (answer) => done(answer));
    rl.once('close', () => done(null));
  });
}

export function approvalChannel(
  mode: 'auto' | 'ask' | 'deny',
  terminal: TerminalIo | null,
  options: { readonly timeoutMs?: number } = {},
): ApprovalChannel {
  return {
    async resolve(request, context) {
      if (mode === 'auto' && !request.requiresHuman) return { decision: 'granted', by: 'policy-auto' };
      if (mode === 'deny' || terminal === null) return { decision: 'denied', by: 'human' };
      terminal.output.write(`${renderApprovalPrompt(request, context, terminal.style)}\n`);
      const answer = await readLine(
        terminal,
        `${terminal.style.bold(request.subject === 'tool' ? 'Allow this call?' : 'Apply?')} type "yes" to approve, anything else denies: `,
        options.timeoutMs ?? 10 * 60_000,
      );
      const granted = answer !== null && /^\s*(y|yes)\s*$/i.test(answer);
      return { decision: granted ? 'granted' : 'denied', by: 'human' };
    },
  };
}
