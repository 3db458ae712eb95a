/**
 * `crustcore completion bash|zsh|fish`: prints the shell's completion script,
 * generated from the command specs (completion/model.ts), so it never drifts
 * from `--help`. Install: `crustcore completion bash > ~/.local/share/bash-completion/completions/crustcore`
 * (zsh: a file `_crustcore` on `$fpath`; fish: `~/.config/fish/completions/crustcore.fish`).
 */
import { type Command, UsageError } from '../cli/command.js';
import { ExitCode } from '../cli/exit-codes.js';
import { completionModel } from '../completion/model.js';
import { completionScript, SHELLS, type Shell } from '../completion/scripts.js';
import { completionSpec, PACK_SPECS } from './pack-specs.js';
import { CORE_SPECS } from './specs.js';

const isShell = (word: string | undefined): word is Shell => SHELLS.some((s) => s === word);

export const completionCommand: Command = {
  ...completionSpec,
  run: async (args, io) => {
    const [shell, ...rest] = args;
    if (!isShell(shell) || rest.length > 0) {
      throw new UsageError(
        `name one shell: ${SHELLS.join(', ')} (got ${args.length === 0 ? 'nothing' : args.join(' ')})`,
      );
    }
    io.stdout.write(completionScript(shell, completionModel([...CORE_SPECS, ...PACK_SPECS])));
    return ExitCode.ok;
  },
};
