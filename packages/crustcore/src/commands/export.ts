/**
 * `crustcore export --format jsonl`: the log as JSON lines, one frame per
 * line (fields in docs/event-log.md), lossless. `--redacted` drops payloads
 * of internal or secret-adjacent frames but keeps every hash, so the chain
 * can still be checked from the export.
 */
import { existsSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { exportJsonl } from '@crustcore/ledger';
import { type Command, UsageError } from '../cli/command.js';
import { ExitCode } from '../cli/exit-codes.js';
import { writeLine } from '../cli/output.js';
import { ledgerPaths, withDefaultDir } from './inspect.js';
import { exportSpec } from './specs.js';

export const exportCommand: Command = {
  ...exportSpec,
  run: async (args, io) => {
    const { values } = parseArgs({
      args: [...args],
      options: {
        dir: { type: 'string' },
        log: { type: 'string' },
        format: { type: 'string' },
        redacted: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    });
    if (values.format !== 'jsonl') throw new UsageError('--format jsonl is required (the only format)');
    const { logPath } = ledgerPaths(await withDefaultDir(values, io), io);
    if (!existsSync(logPath) || !statSync(logPath).isFile()) {
      writeLine(io.stderr, `${io.err.red('error:')} no log at ${logPath} (give --dir of a project or --log FILE)`);
      return ExitCode.usage;
    }
    const result = exportJsonl({ logPath, redacted: values.redacted === true }, (line) => writeLine(io.stdout, line));
    switch (result._tag) {
      case 'Complete':
        return ExitCode.ok;
      case 'IncompleteTail':
        writeLine(
          io.stderr,
          `${io.err.yellow('note:')} the log ends inside a frame at byte ${result.offset} (${result.frames} frames exported); ` +
            'run "crustcore inspect" to tell a crash from a cut',
        );
        return ExitCode.ok;
      case 'Damaged':
        writeLine(
          io.stderr,
          `${io.err.red('error:')} damaged frame at byte ${result.offset} after ${result.frames} frames: ${result.detail}`,
        );
        return ExitCode.integrity;
    }
  },
};
