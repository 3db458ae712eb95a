/**
 * `crustcore backup [--out FILE] [--home DIR] [--json]` and
 * `crustcore restore FILE [--home DIR] [--force] [--json]` (backup/*.ts).
 * The state plane on a PostgreSQL server (`--database-url`) is not in the
 * archive: back it up with pg_dump (docs/state-plane.md, "Backup").
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { describeRestoreError, type RestoreError, restoreBackup } from '../backup/restore.js';
import { describeTakeError, type TakeError, takeBackup } from '../backup/take.js';
import { type Command, UsageError } from '../cli/command.js';
import { ExitCode } from '../cli/exit-codes.js';
import { type Io, writeLine } from '../cli/output.js';
import { crustcoreHome } from '../cli/paths.js';
import { backupSpec, restoreSpec } from './pack-specs.js';

/** A name that sorts by time and needs no quoting: crustcore-backup-20261202T131500Z.ccb. */
const defaultOut = (now: Date): string =>
  `crustcore-backup-${now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}.ccb`;

const takeExit = (tag: TakeError['_tag']): ExitCode => (tag === 'StateInUse' ? ExitCode.busy : ExitCode.usage);
const restoreExit = (tag: RestoreError['_tag']): ExitCode =>
  tag === 'Archive' ? ExitCode.integrity : tag === 'HomeInUse' ? ExitCode.busy : ExitCode.usage;

function refuse(io: Io, json: boolean, message: string, code: ExitCode): ExitCode {
  if (json) writeLine(io.stdout, JSON.stringify({ ok: false, error: message }));
  else writeLine(io.stderr, `${io.err.red('error:')} ${message}`);
  return code;
}

export const backupCommand: Command = {
  ...backupSpec,
  run: async (args, io) => {
    const { values } = parseArgs({
      args: [...args],
      options: { out: { type: 'string' }, home: { type: 'string' }, json: { type: 'boolean', default: false } },
      strict: true,
      allowPositionals: false,
    });
    const home = resolve(io.cwd, values.home ?? crustcoreHome(io.env));
    const out = resolve(io.cwd, values.out ?? defaultOut(new Date()));
    const taken = takeBackup(home, out);
    if (taken._tag === 'Left')
      return refuse(io, values.json === true, describeTakeError(taken.left), takeExit(taken.left._tag));
    const report = taken.right;
    const remote = io.env.CRUSTCORE_DATABASE_URL !== undefined && io.env.CRUSTCORE_DATABASE_URL !== '';
    if (values.json === true) writeLine(io.stdout, JSON.stringify({ ok: true, ...report, home }));
    else {
      writeLine(
        io.stdout,
        `${io.out.green('backed up')} ${home} → ${report.out} (${report.files} files, ${report.bytes} bytes)`,
      );
      for (const left of report.excluded) writeLine(io.stdout, `${io.out.dim('left out')} ${left}`);
    }
    if (remote)
      writeLine(
        io.stderr,
        'note: the state plane at CRUSTCORE_DATABASE_URL is not in the archive; back it up with pg_dump (docs/state-plane.md)',
      );
    return ExitCode.ok;
  },
};

export const restoreCommand: Command = {
  ...restoreSpec,
  run: async (args, io) => {
    const { values, positionals } = parseArgs({
      args: [...args],
      options: {
        home: { type: 'string' },
        force: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: true,
    });
    const [file, ...extra] = positionals;
    if (file === undefined || extra.length > 0) throw new UsageError('name exactly one archive to restore');
    const home = resolve(io.cwd, values.home ?? crustcoreHome(io.env));
    const restored = restoreBackup(resolve(io.cwd, file), home, values.force === true);
    if (restored._tag === 'Left')
      return refuse(io, values.json === true, describeRestoreError(restored.left), restoreExit(restored.left._tag));
    const report = restored.right;
    if (values.json === true) writeLine(io.stdout, JSON.stringify({ ok: true, ...report }));
    else {
      writeLine(
        io.stdout,
        `${io.out.green('restored')} ${report.entries} entries (${report.files} files) into ${report.home}`,
      );
      if (report.previousHome !== null) writeLine(io.stdout, `the previous home is kept at ${report.previousHome}`);
    }
    return ExitCode.ok;
  },
};
