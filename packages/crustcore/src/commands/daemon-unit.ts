/**
 * `crustcore daemon install-unit [--print] [--state-dir DIR]`: the systemd
 * user unit that keeps the daemon running, written to
 * `$XDG_CONFIG_HOME/systemd/user/crustcore.service` (default ~/.config), or
 * printed with --print. The unit runs this very node and this very CLI file
 * (resolved through symlinks, so an `npm i -g` shim still points at a real
 * file) with the CRUSTCORE_HOME of the person who ran it. Secrets (a database
 * URL with a password, the vault key file's path) go in an optional
 * EnvironmentFile, never into the unit: unit files are world-readable by habit.
 */
import { mkdirSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ExitCode } from '../cli/exit-codes.js';
import { type Io, writeLine } from '../cli/output.js';
import { crustcoreHome } from '../cli/paths.js';

export interface UnitInput {
  readonly node: string;
  readonly cli: string;
  readonly home: string;
  readonly stateDir: string | undefined;
}

/**
 * One word of ExecStart/Environment, quoted the way systemd reads it: `%` is a
 * specifier and `$` a variable, so both are doubled; quotes and backslashes escaped.
 */
export function systemdWord(word: string): string {
  if (/[\n\r\0]/.test(word)) throw new Error(`a unit value cannot hold a line break or NUL: ${JSON.stringify(word)}`);
  const escaped = word.replace(/%/g, '%%').replace(/\$/g, '$$$$').replace(/\\/g, '\\\\').replace(/"/g, '\\"');
  return `"${escaped}"`;
}

export function daemonUnit(input: UnitInput): string {
  const exec = [
    input.node,
    input.cli,
    'daemon',
    ...(input.stateDir === undefined ? [] : ['--state-dir', input.stateDir]),
  ];
  return `# Written by \`crustcore daemon install-unit\`. Enable: systemctl --user daemon-reload && systemctl --user enable --now crustcore
[Unit]
Description=CrustCore task supervisor (crustcore daemon)
After=network-online.target

[Service]
Type=simple
ExecStart=${exec.map(systemdWord).join(' ')}
Environment=${systemdWord(`CRUSTCORE_HOME=${input.home}`)}
# CRUSTCORE_DATABASE_URL, CRUSTCORE_VAULT_KEYFILE and API keys go here (mode 0600), not in this file.
EnvironmentFile=-%h/.config/crustcore/daemon.env
# SIGTERM: the daemon stops claiming and cancels running tasks at their next safe point.
KillSignal=SIGTERM
TimeoutStopSec=90
Restart=on-failure
RestartSec=5
UMask=0077
NoNewPrivileges=true

[Install]
WantedBy=default.target
`;
}

export const unitPath = (env: Io['env']): string => {
  const config =
    env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== ''
      ? env.XDG_CONFIG_HOME
      : join(env.HOME ?? homedir(), '.config');
  return join(config, 'systemd', 'user', 'crustcore.service');
};

export async function installUnit(args: readonly string[], io: Io): Promise<ExitCode> {
  const { values } = parseArgs({
    args: [...args],
    options: { print: { type: 'boolean', default: false }, 'state-dir': { type: 'string' } },
    strict: true,
    allowPositionals: false,
  });
  const stateDir = values['state-dir'] === undefined ? undefined : resolve(io.cwd, values['state-dir']);
  const unit = daemonUnit({
    node: process.execPath,
    cli: realpathSync(process.argv[1] ?? ''),
    home: resolve(io.cwd, crustcoreHome(io.env)),
    stateDir,
  });
  if (values.print === true) {
    io.stdout.write(unit);
    return ExitCode.ok;
  }
  const path = unitPath(io.env);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(`${path}.tmp`, unit, { mode: 0o644 });
  renameSync(`${path}.tmp`, path);
  writeLine(io.stdout, `wrote ${path}`);
  writeLine(io.stdout, 'next: systemctl --user daemon-reload && systemctl --user enable --now crustcore');
  return ExitCode.ok;
}
