/**
 * `crustcore gc`: removes task worktrees whose owning process is gone
 * (crash, kill) and prunes git's worktree registrations. Worktrees of live
 * runs are kept. `--json` prints the report.
 */
import { parseArgs } from 'node:util';
import { crustcoreHome, gcWorktrees } from '@crustcore/verify';
import type { Command } from '../cli/command.js';
import { ExitCode } from '../cli/exit-codes.js';
import { writeLine } from '../cli/output.js';
import { gcSpec } from './specs.js';

export const gcCommand: Command = {
  ...gcSpec,
  run: async (args, io) => {
    const { values } = parseArgs({
      args: [...args],
      options: { home: { type: 'string' }, json: { type: 'boolean', default: false } },
      strict: true,
      allowPositionals: false,
    });
    const home = values.home ?? crustcoreHome(io.env);
    const report = await gcWorktrees({ home });
    if (values.json === true) {
      writeLine(io.stdout, JSON.stringify(report));
    } else {
      for (const removed of report.removed)
        writeLine(io.stdout, `${io.out.yellow('removed')} ${removed.path} (${removed.reason})`);
      for (const kept of report.kept)
        writeLine(io.stdout, `${io.out.dim('kept')}    ${kept.path} (pid ${kept.pid} is running)`);
      for (const error of report.errors) writeLine(io.stderr, `${io.err.red('error:')} ${error}`);
      writeLine(io.stdout, `${report.removed.length} removed, ${report.kept.length} in use`);
    }
    return report.errors.length > 0 ? ExitCode.internal : ExitCode.ok;
  },
};
