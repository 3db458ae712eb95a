/**
 * Controlling the daemon through its admin socket:
 *
 *   crustcore pause | resume            stop / restart claiming new tasks (running ones continue)
 *   crustcore cancel ID                 stop a task at its next safe point (queued: dropped at once)
 *   crustcore kill ID                   stop it now; its lease is void
 *   crustcore approve ID                show the pending approval, then grant exactly that one
 *   crustcore deny ID                   deny it
 *
 * ID is a task id (t_…) or a job id (j_…). `approve` grants the approval id
 * and operation hash it printed, so an approval that changed since is refused.
 */
import { parseArgs } from 'node:util';
import type { Json } from '@crustcore/kernel';
import { escapeForPerson } from '@crustcore/verify';
import { type Command, type CommandSpec, UsageError } from '../cli/command.js';
import { askDaemon, asList, asRecord, CLIENT_OPTIONS, socketOf, text } from '../cli/daemon-client.js';
import { ExitCode } from '../cli/exit-codes.js';
import { type Io, writeLine } from '../cli/output.js';
import { colorDiffLine, seeWholePatch } from '../render/approval-channel.js';
import { approveSpec, cancelSpec, denySpec, killSpec, pauseSpec, resumeSpec } from './pack-specs.js';

function idArgument(positionals: readonly string[], name: string): string {
  const [id, ...extra] = positionals;
  if (id === undefined || extra.length > 0) throw new UsageError(`${name} takes one task or job id`);
  return id;
}

function simple(spec: CommandSpec, name: 'pause' | 'resume'): Command {
  return {
    ...spec,
    async run(args, io) {
      const { values } = parseArgs({ args: [...args], options: CLIENT_OPTIONS, strict: true });
      const json = values.json === true;
      const answer = await askDaemon(io, socketOf(io, values), { op: name }, json);
      if (answer._tag === 'Left') return answer.left;
      if (json) writeLine(io.stdout, JSON.stringify({ ok: true, ...asRecord(answer.right) }));
      else writeLine(io.stdout, name === 'pause' ? 'paused: no new tasks will be claimed' : 'resumed');
      return ExitCode.ok;
    },
  };
}

function stopping(spec: CommandSpec, name: 'cancel' | 'kill'): Command {
  return {
    ...spec,
    async run(args, io) {
      const { values, positionals } = parseArgs({
        args: [...args],
        options: CLIENT_OPTIONS,
        allowPositionals: true,
        strict: true,
      });
      const id = idArgument(positionals, name);
      const json = values.json === true;
      const answer = await askDaemon(io, socketOf(io, values), { op: name, id }, json);
      if (answer._tag === 'Left') return answer.left;
      const result = asRecord(answer.right);
      if (json) writeLine(io.stdout, JSON.stringify({ ok: true, ...result }));
      else
        writeLine(
          io.stdout,
          `${text(result.jobId)}: ${text(result.status)}${result.status === 'Killed' ? '' : ' (stops at its next safe point)'}`,
        );
      return ExitCode.ok;
    },
  };
}

function findPending(approvals: readonly Json[], id: string): Record<string, Json> | null {
  for (const entry of approvals) {
    const approval = asRecord(entry);
    if (approval.taskId === id || approval.jobId === id || approval.approvalId === id) return approval;
  }
  return null;
}

function printApproval(io: Io, approval: Record<string, Json>): void {
  const s = io.out;
  writeLine(io.stdout, s.bold(`Approval ${text(approval.approvalId)} for task ${text(approval.taskId)}`));
  writeLine(io.stdout, `  goal      : ${text(approval.goal)}`);
  writeLine(io.stdout, `  operation : ${text(approval.description)}`);
  writeLine(io.stdout, `  op hash   : ${text(approval.opHash)}`);
  if (approval.evidence !== null) writeLine(io.stdout, `  evidence  : ${text(approval.evidence)}`);
  const risks = asList(approval.risks);
  if (risks.length > 0) writeLine(io.stdout, `  risks     : ${s.yellow(risks.map(String).join(', '))}`);
  for (const file of asList(approval.files)) {
    const f = asRecord(file);
    writeLine(io.stdout, `    ${text(f.status).padEnd(2)} ${text(f.path)} ${s.dim(`(${text(f.fileClass)})`)}`);
  }
  if (typeof approval.diffText === 'string') {
    const lines = approval.diffText.split('\n');
    for (const line of lines.slice(0, 200)) writeLine(io.stdout, `    ${colorDiffLine(escapeForPerson(line), s)}`);
    if (approval.diffTruncated === true || lines.length > 200)
      writeLine(io.stdout, s.dim(`    … shortened. ${seeWholePatch(text(approval.taskId))}`));
  }
}

function answering(spec: CommandSpec, name: 'approve' | 'deny'): Command {
  return {
    ...spec,
    async run(args, io) {
      const { values, positionals } = parseArgs({
        args: [...args],
        options: CLIENT_OPTIONS,
        allowPositionals: true,
        strict: true,
      });
      const id = idArgument(positionals, name);
      const json = values.json === true;
      const socket = socketOf(io, values);
      const listed = await askDaemon(io, socket, { op: 'approvals' }, json);
      if (listed._tag === 'Left') return listed.left;
      const approval = findPending(asList(asRecord(listed.right).approvals), id);
      if (approval === null) {
        if (json)
          writeLine(
            io.stdout,
            JSON.stringify({
              ok: false,
              error: { code: 'not-found', message: `nothing waits for approval under ${id}` },
            }),
          );
        else
          writeLine(
            io.stderr,
            `${io.err.red('error:')} nothing waits for approval under ${id} (see "crustcore tasks")`,
          );
        return ExitCode.usage;
      }
      if (!json) printApproval(io, approval);
      const request =
        name === 'approve'
          ? { op: 'approve', id, approvalId: text(approval.approvalId), opHash: text(approval.opHash) }
          : { op: 'deny', id, approvalId: text(approval.approvalId) };
      const answer = await askDaemon(io, socket, request, json);
      if (answer._tag === 'Left') return answer.left;
      const result = asRecord(answer.right);
      if (json) writeLine(io.stdout, JSON.stringify({ ok: true, ...result }));
      else writeLine(io.stdout, `${text(result.decision)}: ${text(result.approvalId)} (task ${text(result.taskId)})`);
      return ExitCode.ok;
    },
  };
}

export const pauseCommand = simple(pauseSpec, 'pause');
export const resumeCommand = simple(resumeSpec, 'resume');
export const cancelCommand = stopping(cancelSpec, 'cancel');
export const killCommand = stopping(killSpec, 'kill');
export const approveCommand = answering(approveSpec, 'approve');
export const denyCommand = answering(denySpec, 'deny');
