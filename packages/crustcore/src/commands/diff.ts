/**
 * `crustcore diff TASK`: shows the task's latest patch (verified or not)
 * with its files and risks, as a person should read it (viewPatch: escaped,
 * never lossy, binary hunks named, never raw bytes on the terminal); `--export FILE` writes the exact patch bytes,
 * which `git apply` accepts; `--json` prints the record.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  crustcoreHome,
  describeViewConcerns,
  escapeForPerson,
  exportPatch,
  loadPatchRecord,
  viewPatch,
} from '@crustcore/verify';
import { type Command, UsageError } from '../cli/command.js';
import { ExitCode } from '../cli/exit-codes.js';
import { writeLine } from '../cli/output.js';
import { colorDiffLine } from '../render/approval-channel.js';
import { diffSpec } from './specs.js';

export const diffCommand: Command = {
  ...diffSpec,
  run: async (args, io) => {
    const { values, positionals } = parseArgs({
      args: [...args],
      options: {
        export: { type: 'string' },
        stat: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        home: { type: 'string' },
      },
      strict: true,
      allowPositionals: true,
    });
    const [taskId, ...extra] = positionals;
    if (taskId === undefined || extra.length > 0) throw new UsageError('give exactly one task id');
    const stored = loadPatchRecord(values.home ?? crustcoreHome(io.env), taskId);
    if (stored._tag === 'Left') {
      writeLine(io.stderr, `${io.err.red('error:')} ${stored.left.message}`);
      return stored.left._tag === 'NoPatch' ? ExitCode.usage : ExitCode.integrity;
    }
    const { record, bytes } = stored.right;
    if (values.export !== undefined) {
      const exported = exportPatch(stored.right, resolve(io.cwd, values.export));
      if (exported._tag === 'Left') {
        writeLine(io.stderr, `${io.err.red('error:')} ${exported.left.message}`);
        return ExitCode.usage;
      }
      writeLine(
        io.stdout,
        `wrote ${exported.right} (${bytes.length} bytes, sha256 ${record.patchSha256}); apply with: git apply ${values.export}`,
      );
      return ExitCode.ok;
    }
    if (values.json === true) {
      writeLine(io.stdout, JSON.stringify(record));
      return ExitCode.ok;
    }
    const status = record.status === 'verified' ? io.out.green('verified') : io.out.yellow('unverified');
    writeLine(
      io.stdout,
      `${io.out.bold(taskId)} ${status} · base ${record.baseCommit.slice(0, 12)} · sha256 ${record.patchSha256.slice(0, 16)}`,
    );
    for (const file of record.files) {
      const from = file.oldPath === null ? '' : `${escapeForPerson(file.oldPath)} → `;
      const name = escapeForPerson(file.path);
      writeLine(io.stdout, `  ${file.status} ${from}${name}${file.binary ? ' (binary)' : ''} [${file.fileClass}]`);
    }
    for (const risk of record.risks)
      writeLine(
        io.stdout,
        `  ${io.out.yellow('risk')} ${risk.kind} (${risk.severity}): ${escapeForPerson(risk.detail)}`,
      );
    const view = viewPatch(bytes);
    for (const warning of describeViewConcerns(view)) writeLine(io.stdout, io.out.yellow(`  warning: ${warning}`));
    if (values.stat !== true) {
      // The view, never the raw bytes: a terminal must not act on what the patch carries.
      writeLine(io.stdout);
      for (const line of view.lines) writeLine(io.stdout, colorDiffLine(line, io.out));
      writeLine(io.stdout, io.out.dim(`exact bytes for git apply: crustcore diff ${taskId} --export FILE`));
    }
    return ExitCode.ok;
  },
};
