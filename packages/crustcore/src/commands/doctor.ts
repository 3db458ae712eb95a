/**
 * `crustcore doctor`: which sandbox backend works on this machine, and if
 * none does, why and the command that fixes it. `--json` prints the probe.
 */
import { parseArgs } from 'node:util';
import { type BackendStatus, probeSandbox, type SandboxProbe } from '@crustcore/sandbox';
import { type Command, UsageError } from '../cli/command.js';
import { ExitCode } from '../cli/exit-codes.js';
import { type Io, writeLine } from '../cli/output.js';

function describeBackend(io: Io, status: BackendStatus, extra: string): void {
  const mark = status.works ? io.out.green('ok  ') : io.out.red('FAIL');
  writeLine(io.stdout, `  ${mark} ${io.out.bold(status.backend)}${extra} — ${status.detail}`);
  if (status.fix !== null) writeLine(io.stdout, `       fix: ${io.out.cyan(status.fix)}`);
}

function printHuman(io: Io, probe: SandboxProbe): void {
  writeLine(io.stdout, io.out.bold('Sandbox'));
  const version = probe.bubblewrap.version === null ? '' : ` (${probe.bubblewrap.version})`;
  describeBackend(io, probe.bubblewrap, version);
  describeBackend(io, probe.processJail, ' (weaker)');
  writeLine(io.stdout, `  process limit: ${probe.processLimit} — ${probe.processLimitDetail}`);
  if (probe.recommended === 'bubblewrap') {
    writeLine(io.stdout, io.out.green('  sandboxed runs use bubblewrap'));
  } else {
    writeLine(
      io.stdout,
      io.out.red('  no strong sandbox works here: sandboxed runs are refused until the fix above is applied'),
    );
    writeLine(
      io.stdout,
      io.out.dim('  (the process jail runs only when chosen explicitly, and results say it is weaker)'),
    );
  }
}

export const doctorCommand: Command = {
  name: 'doctor',
  summary: 'Check which sandbox backend works here, and how to fix it',
  usage: 'crustcore doctor [--json]',
  async run(args, io) {
    let json: boolean;
    try {
      const parsed = parseArgs({
        args: [...args],
        options: { json: { type: 'boolean', default: false } },
        strict: true,
        allowPositionals: false,
      });
      json = parsed.values.json === true;
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
    const probe = await probeSandbox();
    if (json) writeLine(io.stdout, JSON.stringify(probe, null, 2));
    else printHuman(io, probe);
    return probe.recommended === null ? ExitCode.internal : ExitCode.ok;
  },
};
