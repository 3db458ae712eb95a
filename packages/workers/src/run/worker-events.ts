/**
 * Reads a worker CLI's JSON event stream (one JSON object per line on
 * stdout) into what the backend result reports: the last message the agent
 * wrote, the shell commands it says it ran, and whether it ended its turn
 * without an error of its own. All of it is the worker's account, decoded
 * with io-ts; lines that do not decode are transcript and nothing more.
 */
import * as t from 'io-ts';

/** What a worker's events say it did. */
export interface WorkerActivity {
  /** Its last agent message, or null when it wrote none. */
  readonly lastMessage: string | null;
  /** Shell commands from its events, in order (bounded), with the exit code it reported. */
  readonly commands: readonly { readonly command: string; readonly exitCode: number | null }[];
  /** It ended its turn normally (Codex `turn.completed`; Claude `result` with `success`). */
  readonly finishedCleanly: boolean;
  /** Errors it reported (bounded). */
  readonly errors: readonly string[];
  /** Lines that decoded as events. */
  readonly eventCount: number;
}

const MAX_LINES = 200_000;
const MAX_LINE_CHARS = 4 * 1024 * 1024;
const MAX_COMMANDS = 500;
const MAX_ERRORS = 20;
const MAX_ERROR_CHARS = 500;

function jsonLines(stdout: string): unknown[] {
  const values: unknown[] = [];
  const lines = stdout.split('\n');
  for (const line of lines.slice(0, MAX_LINES)) {
    const trimmed = line.trim();
    if (!trimmed.startsWith('{') || trimmed.length > MAX_LINE_CHARS) continue;
    try {
      values.push(JSON.parse(trimmed));
    } catch {
      // Not an event (a truncation marker, a stray log line): transcript only.
    }
  }
  return values;
}

// ─── Codex (`codex exec --json`) ───────────────────────────────────────────

const CodexAgentMessage = t.type({ type: t.literal('agent_message'), text: t.string });
const CodexCommand = t.intersection([
  t.type({ type: t.literal('command_execution'), command: t.string }),
  t.partial({ exit_code: t.union([t.number, t.null]) }),
]);
const CodexItemError = t.type({ type: t.literal('error'), message: t.string });
const CodexItemCompleted = t.type({ type: t.literal('item.completed'), item: t.UnknownRecord });
const CodexTurnCompleted = t.type({ type: t.literal('turn.completed') });
const CodexTurnFailed = t.type({ type: t.literal('turn.failed'), error: t.type({ message: t.string }) });
const CodexError = t.type({ type: t.literal('error'), message: t.string });

/** Codex `exec --json` events: `item.completed` items, `turn.completed`, `turn.failed`, `error`. */
export function readCodexEvents(stdout: string): WorkerActivity {
  let lastMessage: string | null = null;
  const commands: { command: string; exitCode: number | null }[] = [];
  const errors: string[] = [];
  let completed = false;
  let failed = false;
  let eventCount = 0;
  const addError = (message: string): void => {
    if (errors.length < MAX_ERRORS) errors.push(message.slice(0, MAX_ERROR_CHARS));
  };
  for (const value of jsonLines(stdout)) {
    const item = CodexItemCompleted.decode(value);
    if (item._tag === 'Right') {
      eventCount += 1;
      const message = CodexAgentMessage.decode(item.right.item);
      if (message._tag === 'Right') lastMessage = message.right.text;
      const command = CodexCommand.decode(item.right.item);
      if (command._tag === 'Right' && commands.length < MAX_COMMANDS) {
        const exitCode = command.right.exit_code;
        commands.push({ command: command.right.command, exitCode: typeof exitCode === 'number' ? exitCode : null });
      }
      // Codex reports warnings (unknown model metadata) as error items; they do not fail the turn.
      const itemError = CodexItemError.decode(item.right.item);
      if (itemError._tag === 'Right') addError(itemError.right.message);
      continue;
    }
    if (CodexTurnCompleted.is(value)) {
      eventCount += 1;
      completed = true;
    } else if (CodexTurnFailed.is(value)) {
      eventCount += 1;
      failed = true;
      addError(value.error.message);
    } else if (CodexError.is(value)) {
      eventCount += 1;
      addError(value.message);
    } else if (t.type({ type: t.string }).is(value)) {
      eventCount += 1;
    }
  }
  return { lastMessage, commands, finishedCleanly: completed && !failed, errors, eventCount };
}

// ─── Claude Code (`claude -p --output-format stream-json --verbose`) ───────

const ClaudeText = t.type({ type: t.literal('text'), text: t.string });
const ClaudeToolUse = t.type({ type: t.literal('tool_use'), name: t.string, input: t.UnknownRecord });
const ClaudeBashInput = t.type({ command: t.string });
const ClaudeAssistant = t.type({
  type: t.literal('assistant'),
  message: t.type({ content: t.array(t.unknown) }),
});
const ClaudeResult = t.intersection([
  t.type({ type: t.literal('result'), subtype: t.string }),
  t.partial({ is_error: t.boolean, result: t.string }),
]);

/** Claude Code stream-json: `assistant` messages (text, tool_use), then one `result`. */
export function readClaudeEvents(stdout: string): WorkerActivity {
  let lastMessage: string | null = null;
  let resultText: string | null = null;
  const commands: { command: string; exitCode: number | null }[] = [];
  const errors: string[] = [];
  let success = false;
  let eventCount = 0;
  for (const value of jsonLines(stdout)) {
    const assistant = ClaudeAssistant.decode(value);
    if (assistant._tag === 'Right') {
      eventCount += 1;
      const texts: string[] = [];
      for (const block of assistant.right.message.content) {
        const text = ClaudeText.decode(block);
        if (text._tag === 'Right') texts.push(text.right.text);
        const tool = ClaudeToolUse.decode(block);
        if (tool._tag !== 'Right' || tool.right.name !== 'Bash') continue;
        const input = ClaudeBashInput.decode(tool.right.input);
        // Claude Code's events carry no exit code: its tool results are text.
        if (input._tag === 'Right' && commands.length < MAX_COMMANDS) {
          commands.push({ command: input.right.command, exitCode: null });
        }
      }
      if (texts.length > 0) lastMessage = texts.join('\n');
      continue;
    }
    const result = ClaudeResult.decode(value);
    if (result._tag === 'Right') {
      eventCount += 1;
      success = result.right.subtype === 'success' && result.right.is_error !== true;
      if (result.right.result !== undefined) resultText = result.right.result;
      if (!success && errors.length < MAX_ERRORS) {
        errors.push(`${result.right.subtype}: ${(result.right.result ?? '').slice(0, MAX_ERROR_CHARS)}`);
      }
    } else if (t.type({ type: t.string }).is(value)) {
      eventCount += 1;
    }
  }
  const finalText = resultText !== null && resultText !== '' ? resultText : lastMessage;
  return { lastMessage: finalText, commands, finishedCleanly: success, errors, eventCount };
}
