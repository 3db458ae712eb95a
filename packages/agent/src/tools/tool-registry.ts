/**
 * From a model's tool call (name + untrusted JSON arguments) to a plan: the
 * arguments are decoded with io-ts first; a bad name or bad arguments become
 * a message for the model. todo_* and dispatch_subagent are answered by the
 * loop itself (they need its state), so they come back as `loop` calls.
 */
import type * as t from 'io-ts';
import { planCheckSyntax, planRunCommand } from './command-tools.js';
import { isToolName, type ToolName } from './definitions.js';
import { planEditFile, planReadFile, planWriteFile } from './file-tools.js';
import { planGlob, planGrep } from './search-tools.js';
import {
  CheckSyntaxArgs,
  DispatchSubagentArgs,
  decodeArgs,
  EditFileArgs,
  GlobArgs,
  GrepArgs,
  ReadFileArgs,
  RunCommandArgs,
  TodoReadArgs,
  TodoWriteArgs,
  WriteFileArgs,
} from './tool-args.js';
import type { ToolPlan } from './tool-plan.js';
import type { AgentWorkspace } from './workspace.js';

export type LoopCall =
  | { readonly tool: 'todo_read' }
  | { readonly tool: 'todo_write'; readonly args: t.TypeOf<typeof TodoWriteArgs> }
  | { readonly tool: 'dispatch_subagent'; readonly args: t.TypeOf<typeof DispatchSubagentArgs> };

export type PlannedCall =
  | { readonly kind: 'plan'; readonly tool: ToolName; readonly plan: ToolPlan }
  | { readonly kind: 'loop'; readonly call: LoopCall }
  | { readonly kind: 'invalid'; readonly message: string };

const invalid = (message: string): PlannedCall => ({ kind: 'invalid', message });

function withArgs<A, O>(
  codec: t.Type<A, O, unknown>,
  raw: unknown,
  tool: string,
  make: (args: A) => PlannedCall,
): PlannedCall {
  const decoded = decodeArgs(codec, raw);
  return decoded.ok ? make(decoded.value) : invalid(`invalid arguments for ${tool}: ${decoded.message}`);
}

/** Plans one call. `allowed` is the set of tools this agent (or subagent) was given. */
export function planToolCall(
  workspace: AgentWorkspace,
  name: string,
  raw: unknown,
  allowed: ReadonlySet<ToolName>,
): PlannedCall {
  if (!isToolName(name) || !allowed.has(name)) {
    return invalid(`unknown tool ${JSON.stringify(name.slice(0, 100))}; available: ${[...allowed].join(', ')}`);
  }
  const plan = (tool: ToolName, made: ToolPlan | string): PlannedCall =>
    typeof made === 'string' ? invalid(`${tool}: ${made}`) : { kind: 'plan', tool, plan: made };
  switch (name) {
    case 'read_file':
      return withArgs(ReadFileArgs, raw, name, (args) => plan(name, planReadFile(workspace, args)));
    case 'write_file':
      return withArgs(WriteFileArgs, raw, name, (args) => plan(name, planWriteFile(workspace, args)));
    case 'edit_file':
      return withArgs(EditFileArgs, raw, name, (args) => plan(name, planEditFile(workspace, args)));
    case 'run_command':
      return withArgs(RunCommandArgs, raw, name, (args) => plan(name, planRunCommand(workspace, args)));
    case 'check_syntax':
      return withArgs(CheckSyntaxArgs, raw, name, (args) => plan(name, planCheckSyntax(workspace, args)));
    case 'glob':
      return withArgs(GlobArgs, raw, name, (args) => plan(name, planGlob(workspace, args)));
    case 'grep':
      return withArgs(GrepArgs, raw, name, (args) => plan(name, planGrep(workspace, args)));
    case 'todo_read':
      return withArgs(TodoReadArgs, raw, name, () => ({ kind: 'loop', call: { tool: 'todo_read' } }));
    case 'todo_write':
      return withArgs(TodoWriteArgs, raw, name, (args) => ({ kind: 'loop', call: { tool: 'todo_write', args } }));
    case 'dispatch_subagent':
      return withArgs(DispatchSubagentArgs, raw, name, (args) => ({
        kind: 'loop',
        call: { tool: 'dispatch_subagent', args },
      }));
  }
}
