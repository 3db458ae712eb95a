/**
 * `crustcore status`: what the running daemon is doing — owner, engine,
 * paused or not, running jobs, pending approvals, task jobs by status.
 */
import { parseArgs } from 'node:util';
import type { Command } from '../cli/command.js';
import { askDaemon, asList, asRecord, CLIENT_OPTIONS, socketOf, text } from '../cli/daemon-client.js';
import { ExitCode } from '../cli/exit-codes.js';
import { writeLine } from '../cli/output.js';
import { statusSpec } from './pack-specs.js';

export const statusCommand: Command = {
  ...statusSpec,
  async run(args, io) {
    const { values } = parseArgs({ args: [...args], options: CLIENT_OPTIONS, strict: true });
    const json = values.json === true;
    const answer = await askDaemon(io, socketOf(io, values), { op: 'status' }, json);
    if (answer._tag === 'Left') return answer.left;
    const status = asRecord(answer.right);
    if (json) {
      writeLine(io.stdout, JSON.stringify({ ok: true, ...status }));
      return ExitCode.ok;
    }
    const s = io.out;
    writeLine(
      io.stdout,
      `${s.bold('daemon')} ${text(status.owner)} on ${text(status.engine)} — ${status.paused === true ? s.yellow('paused') : s.green('running')}, ${text(status.workers)} worker(s), lease ${text(status.leaseMs)} ms`,
    );
    const running = asList(status.running);
    writeLine(io.stdout, `  running: ${running.length}`);
    for (const entry of running) {
      const job = asRecord(entry);
      writeLine(
        io.stdout,
        `    ${s.cyan(text(job.taskId))} ${text(job.jobId)} attempt ${text(job.attempt)}: ${text(job.goal)}`,
      );
    }
    writeLine(io.stdout, `  approvals waiting: ${text(status.pendingApprovals)}`);
    const counts = asRecord(status.jobs);
    const line = Object.entries(counts)
      .map(([name, count]) => `${name} ${text(count)}`)
      .join(', ');
    writeLine(io.stdout, `  task jobs: ${line === '' ? 'none' : line}`);
    return ExitCode.ok;
  },
};
