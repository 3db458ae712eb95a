/**
 * `crustcore index [--dir DIR] [--json]`: builds the repository's capsule
 * (files by role, stack, commands, code symbols) incrementally and prints a
 * short summary, or the whole capsule with --json. The index pack loads only
 * when this command runs; its cache lives in the repository's project
 * directory under $CRUSTCORE_HOME, beside the run ledger.
 *
 * Exit codes: 0 built; 2 bad input (not a git work tree, unreadable
 * directory, a CRUSTCORE_HOME inside the work tree); 70 git or the cache
 * failed.
 */
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { IndexError, IndexResult } from '@crustcore/index';
import { projectDirOf } from '@crustcore/runtime';
import type { Command } from '../cli/command.js';
import { UsageError } from '../cli/command.js';
import { ExitCode } from '../cli/exit-codes.js';
import { type Io, writeLine } from '../cli/output.js';
import { crustcoreHome } from '../cli/paths.js';
import { indexSpec } from './pack-specs.js';

const EXIT_FOR: Readonly<Record<IndexError['reason'], ExitCode>> = {
  'unreadable-dir': ExitCode.usage,
  'not-a-repository': ExitCode.usage,
  'cache-inside-worktree': ExitCode.usage,
  'git-failed': ExitCode.internal,
  io: ExitCode.internal,
};

function summary(io: Io, dir: string, result: IndexResult): string {
  const s = io.out;
  const { capsule, stats } = result;
  const symbols = capsule.files.reduce((sum, file) => sum + file.symbols.length, 0);
  const stack = capsule.stack
    .filter((entry) => !entry.manifest.includes('/'))
    .map((entry) => (entry.tools.length === 0 ? entry.ecosystem : `${entry.ecosystem} (${entry.tools.join(', ')})`));
  const roles = Object.entries(capsule.roles)
    .filter(([, count]) => count > 0)
    .map(([role, count]) => `${count} ${role}`);
  const lines = [
    `${s.bold('Indexed')} ${stats.files} files in ${dir}: ${stats.parsed.length} parsed, ${stats.reused} from the cache.`,
    `  ${roles.join(' · ')} · ${symbols} symbols`,
    `  stack: ${stack.length === 0 ? 'none detected' : stack.join(', ')}`,
    `  test: ${capsule.testCommands.join(' | ') || 'none found'} · build: ${capsule.buildCommands.join(' | ') || 'none found'}`,
  ];
  if (capsule.unstaged > 0)
    lines.push(
      s.yellow(
        `  ${capsule.unstaged} file(s) have unstaged changes: the capsule shows their staged text (git add to include).`,
      ),
    );
  lines.push(s.dim(`  cache: ${result.cacheDir} · --json prints the whole capsule`));
  return lines.join('\n');
}

export const indexCommand: Command = {
  ...indexSpec,
  run: async (args: readonly string[], io: Io): Promise<ExitCode> => {
    const { values, positionals } = parseArgs({
      args: [...args],
      options: { dir: { type: 'string' }, json: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const dir = resolve(io.cwd, values.dir ?? '.');
    const home = crustcoreHome(io.env);
    const { buildIndex } = await import('@crustcore/index');
    const built = await buildIndex({ dir, cacheDirFor: (repo) => join(projectDirOf(home, repo), 'index') });
    if (built._tag === 'Left') {
      writeLine(io.stderr, `${io.err.red('error:')} ${built.left.message}`);
      writeLine(io.stderr, `  next: ${built.left.hint}`);
      return EXIT_FOR[built.left.reason];
    }
    if (values.json === true) {
      writeLine(io.stdout, JSON.stringify({ capsule: built.right.capsule, stats: built.right.stats }));
    } else {
      writeLine(io.stdout, summary(io, dir, built.right));
    }
    return ExitCode.ok;
  },
};
