/**
 * Names, summaries and usage of the commands that need a pack (agent,
 * secrets, state, mcp, the daemon). Strings only, like specs.ts; the nano
 * build never sees this module.
 */
import type { CommandSpec } from '../cli/command.js';

/** The options every daemon client command accepts (cli/daemon-client.ts parses them). */
export const CLIENT_USAGE = '[--state-dir DIR | --socket PATH] [--json]';

const ADD_USAGE = `crustcore tasks add --dir DIR --goal TEXT (--worker ARGV | --backend codex|claude|native [--model M]) [--verify ARGV] [--approve auto|ask|deny] [--max-revisits N] [--timeout SECONDS] [--database-url URL] ${CLIENT_USAGE}`;
const LIST_USAGE = `crustcore tasks [list] [--limit N] [--database-url URL] ${CLIENT_USAGE}`;

export const chatSpec: CommandSpec = {
  name: 'chat',
  summary: 'talk with the native coding agent; every change is verified in a sandbox before it lands',
  usage:
    'crustcore chat [--dir DIR] [--verify ARGV] [--model PROVIDER/MODEL] [--models-config FILE] [--replay FILE] [--resume [ID|latest]] [--approve ask|auto|deny] [--thinking LEVEL] [--apply] [--no-memory] [--database-url URL]',
};

export const secretSpec: CommandSpec = {
  name: 'secret',
  summary: 'store, list or remove secrets in the encrypted vault (values never on the command line)',
  usage: 'crustcore secret set NAME [--label TEXT] | list [--json] | rm NAME   [--vault PATH]',
};

export const configSpec: CommandSpec = {
  name: 'config',
  summary: "show or change settings (user file, or the repository's with --project); list says where each came from",
  usage:
    'crustcore config get KEY | set KEY VALUE [--project] | unset KEY [--project] | list [--json] | trust KEY   [--dir DIR]',
};

export const modelsSpec: CommandSpec = {
  name: 'models',
  summary: 'list the model registry; --probe asks each endpoint what it serves',
  usage: 'crustcore models [--config FILE] [--probe] [--json]',
};

export const daemonSpec: CommandSpec = {
  name: 'daemon',
  summary: 'run the task supervisor: claim queued tasks from the state plane, run, heartbeat and settle them',
  usage:
    'crustcore daemon [--database-url URL] [--state-dir DIR] [--workers N] [--owner NAME] [--lease-ms N] [--poll-ms N] [--approval-timeout SECONDS] [--json]\n       crustcore daemon install-unit [--print] [--state-dir DIR]   (the systemd user unit, docs/daemon.md)',
};

export const enqueueSpec: CommandSpec = {
  name: 'enqueue',
  summary: 'queue a task for the daemon (same as tasks add)',
  usage: ADD_USAGE.replace('crustcore tasks add', 'crustcore enqueue'),
};

export const statusSpec: CommandSpec = {
  name: 'status',
  summary: 'show what the daemon is doing (running jobs, approvals waiting, queue counts)',
  usage: `crustcore status ${CLIENT_USAGE}`,
};

export const tasksSpec: CommandSpec = {
  name: 'tasks',
  summary: "list the daemon's tasks, or queue one (tasks add)",
  usage: `${LIST_USAGE}\n       ${ADD_USAGE}`,
};

const control = (name: string, takesId: boolean, summary: string): CommandSpec => ({
  name,
  summary,
  usage: `crustcore ${name} ${takesId ? 'ID ' : ''}${CLIENT_USAGE}`,
});

export const pauseSpec = control('pause', false, 'stop the daemon claiming new tasks (running tasks continue)');
export const resumeSpec = control('resume', false, 'let a paused daemon claim tasks again');
export const cancelSpec = control(
  'cancel',
  true,
  'cancel a task: dropped if queued, stopped at its next safe point if running',
);
export const killSpec = control('kill', true, 'kill a task now (its lease becomes void)');
export const approveSpec = control('approve', true, "show a task's pending approval and grant exactly that one");
export const denySpec = control('deny', true, "deny a task's pending approval");

/** `crustcore mcp add|list|remove|import|approve`: the gateway's registry of the user's servers (mcp-servers.ts). */
export const MCP_REGISTRY_USAGE =
  'crustcore mcp add NAME (--url URL | -- COMMAND ARG...) [--env K=V]... [--auth TARGET=secret://NAME] [--repo DIR... | --any-repo] [--policy allow|ask|deny] [--timeout SECONDS] [--read-path DIR]...\n       crustcore mcp list [--json] | remove NAME | approve NAME [--yes]\n       crustcore mcp import (--project DIR | --from FILE --format mcp-json|claude|codex)';

export const mcpSpec: CommandSpec = {
  name: 'mcp',
  summary:
    'serve the CrustCore MCP tools on stdio (create_task, stage_diff, verify, status, diff, approve, apply, export)',
  usage:
    'crustcore mcp [--dir REPO]... [--verify ARGV] [--database-url URL | --ephemeral] [--state-dir DIR] [--verify-timeout SECONDS]' +
    `\n       ${MCP_REGISTRY_USAGE}`,
};

export const mcpTokenSpec: CommandSpec = {
  name: 'mcp-token',
  summary: "show an MCP task's verified patch and print a one-time approval token bound to it",
  usage: 'crustcore mcp-token TASK [--state-dir DIR | --socket PATH] [--json]',
};

export const indexSpec: CommandSpec = {
  name: 'index',
  summary: 'map the repository: files by role, stack, test/build commands and code symbols (incremental)',
  usage: 'crustcore index [--dir DIR] [--json]',
};

export const memorySpec: CommandSpec = {
  name: 'memory',
  summary: "the repository's memory: nuggets, conventions, decisions, and failures with their verified fixes",
  usage:
    'crustcore memory add [--kind nugget|convention|decision] [--tag T]... TEXT... | list [--kind K] [--limit N] | forget ID | search QUERY... | context GOAL... | learn   [--dir DIR] [--database-url URL] [--json]',
};

export const backupSpec: CommandSpec = {
  name: 'backup',
  summary: 'archive $CRUSTCORE_HOME (ledgers, projects, memory, vault, embedded state) with a SHA-256 manifest',
  usage: 'crustcore backup [--out FILE] [--home DIR] [--json]',
};

export const restoreSpec: CommandSpec = {
  name: 'restore',
  summary:
    'verify a backup archive, then restore it into an empty $CRUSTCORE_HOME (--force replaces one, keeping the old)',
  usage: 'crustcore restore FILE [--home DIR] [--force] [--json]',
};

export const completionSpec: CommandSpec = {
  name: 'completion',
  summary: 'print the shell completion script for bash, zsh or fish',
  usage: 'crustcore completion bash|zsh|fish',
};

/** In the order `--help` lists them (pack-commands.ts pairs each with its loader, in this order). */
export const releaseSpec: CommandSpec = {
  name: 'release',
  summary: 'verify a release artifact: its minisign (Ed25519) signature and its SHA-256 in the signed checksum list',
  usage: 'crustcore release verify FILE --sig FILE.minisig --pubkey KEY [--sums SHA256SUMS]',
};

export const PACK_SPECS: readonly CommandSpec[] = [
  chatSpec,
  secretSpec,
  configSpec,
  modelsSpec,
  daemonSpec,
  enqueueSpec,
  statusSpec,
  tasksSpec,
  pauseSpec,
  resumeSpec,
  cancelSpec,
  killSpec,
  approveSpec,
  denySpec,
  mcpSpec,
  mcpTokenSpec,
  indexSpec,
  memorySpec,
  releaseSpec,
  backupSpec,
  restoreSpec,
  completionSpec,
];
