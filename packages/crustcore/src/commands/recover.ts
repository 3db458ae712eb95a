/**
 * `crustcore recover`: finishes interrupted applies. Every journal that did
 * not durably reach APPLIED is rolled back to the old content; running it
 * again changes nothing (it is idempotent and safe to interrupt). Also runs
 * at start-up. `--journal DIR` recovers an artifact directory instead.
 */
import { parseArgs } from 'node:util';
import { crustcoreHome, journalDir, recoverJournals } from '@crustcore/verify';
import type { Command } from '../cli/command.js';
import { ExitCode } from '../cli/exit-codes.js';
import { writeLine } from '../cli/output.js';
import { recoverSpec } from './specs.js';

export const recoverCommand: Command = {
  ...recoverSpec,
  run: async (args, io) => {
    const { values } = parseArgs({
      args: [...args],
      options: { home: { type: 'string' }, journal: { type: 'string' }, json: { type: 'boolean', default: false } },
      strict: true,
      allowPositionals: false,
    });
    const journalRoot = values.journal ?? journalDir(values.home ?? crustcoreHome(io.env));
    // Every journal, ended ones too: this command lists what it found.
    const result = recoverJournals({ journalRoot, includeEnded: true });
    if (result._tag === 'Left') {
      const message = `another crustcore process (pid ${result.left.owner.pid}) holds the journal lock; try again when it ends`;
      if (values.json === true)
        writeLine(io.stdout, JSON.stringify({ error: result.left._tag, pid: result.left.owner.pid }));
      else writeLine(io.stderr, `${io.err.red('error:')} ${message}`);
      return ExitCode.internal;
    }
    const journals = result.right;
    if (values.json === true) {
      writeLine(io.stdout, JSON.stringify({ journalRoot, journals }));
      return ExitCode.ok;
    }
    const acted = journals.filter((j) => j.action !== 'none');
    for (const journal of acted) {
      const conflicts =
        journal.conflicts.length > 0 ? `; left alone (changed since): ${journal.conflicts.join(', ')}` : '';
      writeLine(io.stdout, `${io.out.yellow(journal.action)} ${journal.journalId} (was ${journal.found})${conflicts}`);
    }
    writeLine(io.stdout, acted.length === 0 ? 'nothing to recover' : `${acted.length} journal(s) recovered`);
    return ExitCode.ok;
  },
};
