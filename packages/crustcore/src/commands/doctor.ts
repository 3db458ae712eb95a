/**
 * `crustcore doctor`: which sandbox backend works on this machine, and if
 * none does, why and the command that fixes it. `--json` prints the probe.
 */
import { parseArgs } from 'node:util';
import { type BackendStatus, probeSandbox, type SandboxProbe } from '@crustcore/sandbox';
import { type Command, UsageError } from '../cli/command.js';
import { ExitCode } from '../cli/exit-codes.js';
import { type Io, writeLine } from '../cli/output.js';
import { doctorSpec } from './specs.js';

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

interface WorkerCliReport {
  readonly name: string;
  readonly status: string;
  readonly version?: string;
  readonly message?: string;
  readonly fix?: string;
}

/** Which worker CLIs (Codex, Claude Code) are installed; the workers pack loads only here. */
async function probeWorkers(): Promise<readonly WorkerCliReport[]> {
  try {
    const workers = (await import('@crustcore/workers')) as {
      probeWorkerClis: () => Promise<readonly ({ _tag: string; name: string } & Record<string, unknown>)[]>;
    };
    const found = await workers.probeWorkerClis();
    return found.map((w) => ({
      name: w.name,
      status: w._tag,
      ...(typeof w.version === 'string' ? { version: w.version } : {}),
      ...(typeof w.message === 'string' ? { message: w.message } : {}),
      ...(typeof w.fix === 'string' ? { fix: w.fix } : {}),
    }));
  } catch {
    return [{ name: 'workers pack', status: 'Missing', fix: 'npm install @crustcore/workers' }];
  }
}

function printWorkers(io: Io, workers: readonly WorkerCliReport[]): void {
  writeLine(io.stdout, '');
  writeLine(io.stdout, io.out.bold('Worker CLIs'));
  for (const w of workers) {
    if (w.status === 'Installed') writeLine(io.stdout, `  ${io.out.green('✓')} ${w.name} ${w.version ?? ''}`);
    else
      writeLine(
        io.stdout,
        `  ${io.out.yellow('✗')} ${w.name}: ${w.message ?? w.status}${w.fix ? ` — fix: ${w.fix}` : ''}`,
      );
  }
}

export const doctorCommand: Command = {
  ...doctorSpec,
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
    const workers = await probeWorkers();
    if (json) writeLine(io.stdout, JSON.stringify({ ...probe, workers }, null, 2));
    else {
      printHuman(io, probe);
      printWorkers(io, workers);
    }
    return probe.recommended === null ? ExitCode.internal : ExitCode.ok;
  },
};
