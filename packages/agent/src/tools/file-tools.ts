/**
 * read_file, write_file and edit_file over confine's structured tools. Each
 * runs inside the worktree gate (so it never overlaps a sandboxed command)
 * and reports refusals as text for the model. File content is wrapped as
 * untrusted data and scrubbed of secrets before anyone sees it.
 */
import { editText, readText, resolveReadPath, resolveWritePath, writeText } from '@crustcore/confine';
import type * as t from 'io-ts';
import { wrapUntrusted } from '../context/untrusted.js';
import type { ToolExecution } from '../tool-gate.js';
import type { EditFileArgs, ReadFileArgs, WriteFileArgs } from './tool-args.js';
import { execution, type ToolPlan } from './tool-plan.js';
import { type AgentWorkspace, describePathError } from './workspace.js';

/** Bound on what one read returns to the model. */
export const MAX_READ_OUTPUT_BYTES = 64 * 1024;

async function gated(workspace: AgentWorkspace, signal: AbortSignal, run: () => ToolExecution): Promise<ToolExecution> {
  const result = await workspace.gate.withToolWrite(run, { signal });
  return result._tag === 'Right' ? result.right : execution(`not run: ${result.left.message}`, false);
}

/** `text` with 1-based line numbers, starting at `first`. */
export function numberLines(text: string, first: number): string {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const width = String(first + lines.length - 1).length;
  return lines.map((line, index) => `${String(first + index).padStart(width)}\t${line.replace(/\r$/, '')}`).join('\n');
}

export function planReadFile(workspace: AgentWorkspace, args: t.TypeOf<typeof ReadFileArgs>): ToolPlan {
  const path = workspace.operationPath(args.path);
  return {
    operation: { op: 'fs.read', path },
    reads: path,
    writes: null,
    mutates: false,
    execute: (signal) =>
      gated(workspace, signal, () => {
        const confined = resolveReadPath(workspace.readCap, args.path);
        if (confined._tag === 'Left') return execution(describePathError(confined.left), false);
        const read = readText(workspace.readCap, confined.right, {
          maxOutputBytes: MAX_READ_OUTPUT_BYTES,
          ...(args.startLine === undefined ? {} : { startLine: args.startLine }),
          ...(args.endLine === undefined ? {} : { endLine: args.endLine }),
        });
        if (read._tag === 'Left') {
          const error = read.left;
          const fileProblem =
            error._tag === 'FileTooLarge' || error._tag === 'BinaryFile' || error._tag === 'InvalidLineRange';
          return execution(fileProblem ? `${error._tag}: ${error.message}` : describePathError(error), false);
        }
        const r = read.right;
        const header =
          r.totalLines === 0
            ? `${r.path} is empty`
            : `${r.path} lines ${r.startLine}-${r.endLine} of ${r.totalLines}${r.truncated ? ' (cut short: read a smaller range for the rest)' : ''}`;
        const body = r.totalLines === 0 ? '' : numberLines(r.text, r.startLine);
        return execution(`${header}\n${wrapUntrusted(`file ${r.path}`, workspace.scrub(body))}`, true);
      }),
  };
}

export function planWriteFile(workspace: AgentWorkspace, args: t.TypeOf<typeof WriteFileArgs>): ToolPlan {
  const path = workspace.operationPath(args.path);
  return {
    operation: { op: 'fs.write', path },
    reads: null,
    writes: path,
    mutates: true,
    execute: (signal) =>
      gated(workspace, signal, () => {
        const confined = resolveWritePath(workspace.writeCap, args.path);
        if (confined._tag === 'Left') return execution(describePathError(confined.left), false);
        const written = writeText(workspace.writeCap, confined.right, args.content);
        if (written._tag === 'Left') {
          const error = written.left;
          return execution(
            error._tag === 'FileTooLarge' ? `${error._tag}: ${error.message}` : describePathError(error),
            false,
          );
        }
        const w = written.right;
        return execution(`${w.created ? 'created' : 'replaced'} ${w.path} (${w.bytesWritten} bytes)`, true);
      }),
  };
}

export function planEditFile(workspace: AgentWorkspace, args: t.TypeOf<typeof EditFileArgs>): ToolPlan {
  const path = workspace.operationPath(args.path);
  return {
    operation: { op: 'fs.write', path },
    reads: null,
    writes: path,
    mutates: true,
    execute: (signal) =>
      gated(workspace, signal, () => {
        const confined = resolveWritePath(workspace.writeCap, args.path);
        if (confined._tag === 'Left') return execution(describePathError(confined.left), false);
        const edited = editText(workspace.writeCap, confined.right, {
          oldText: args.oldText,
          newText: args.newText,
          startLine: args.startLine,
          ...(args.endLine === undefined ? {} : { endLine: args.endLine }),
        });
        if (edited._tag === 'Right') {
          const e = edited.right;
          const drift =
            e.driftLines === 0
              ? ''
              : ` (the text had moved ${Math.abs(e.driftLines)} line(s) ${e.driftLines < 0 ? 'up' : 'down'})`;
          return execution(`edited ${e.path} at line ${e.line}${drift}`, true);
        }
        const error = edited.left;
        switch (error._tag) {
          case 'EditMismatch': {
            const d = error.diagnosis;
            const lines = [
              `edit failed: oldText was not found near lines ${args.startLine}-${args.endLine ?? args.startLine} of ${args.path}.`,
              d.foundAtLines.length > 0 ? `The exact text occurs at line(s) ${d.foundAtLines.join(', ')}.` : '',
              d.closestLine === null
                ? 'The file is empty.'
                : `Closest line: ${d.closestLine} (similarity ${d.similarity}). Expected (-) vs actual (+):`,
            ].filter((line) => line !== '');
            return execution(
              `${lines.join('\n')}\n${wrapUntrusted(`file ${args.path}`, workspace.scrub(d.hint))}`,
              false,
            );
          }
          case 'AmbiguousEdit':
            return execution(`edit failed: ${error.message} (lines ${error.lines.slice(0, 10).join(', ')})`, false);
          case 'InvalidEdit':
          case 'FileTooLarge':
          case 'BinaryFile':
            return execution(`edit failed: ${error._tag}: ${error.message}`, false);
          default:
            return execution(describePathError(error), false);
        }
      }),
  };
}
