/**
 * Names, summaries and usage of the verifier-core commands (everything
 * crustcore-nano carries). Strings only: the command table and `--help` read
 * them without loading a command; each command's module spreads its spec.
 */
import type { CommandSpec } from '../cli/command.js';

export const demoSpec: CommandSpec = {
  name: 'demo',
  summary: 'watch a verified task end to end on a sample repository (no API key needed)',
  usage: 'crustcore demo [--agent scripted|native] [--json | --output-format stream-json]',
};

export const runSpec: CommandSpec = {
  name: 'run',
  summary:
    'run one task: a backend proposes a patch, CrustCore verifies it in a sandbox, then applies it with approval',
  usage:
    'crustcore run --dir DIR --goal TEXT [--verify ARGV] [--worker ARGV | --backend NAME] [--approve auto|ask|deny] [--commit] [--max-revisits N] [--timeout SECONDS] [--profile readonly|supervised|full] [--ref REF] [--setup ARGV] [--allow-install-scripts] [--no-environment] [--no-memory] [--database-url URL] [--json | --output-format text|json|stream-json]\n       codex|claude: [--model MODEL] [--mcp NAME,…]\n       native agent: [--model PROVIDER/MODEL] [--models-config FILE] [--thinking off|low|medium|high] [--max-turns N] [--resume ID|latest] [--replay FILE] [--record FILE]',
};

export const inspectSpec: CommandSpec = {
  name: 'inspect',
  summary: "check a ledger (chain, head, receipts, artifacts, replay) and tell each task's story",
  usage:
    'crustcore inspect [--dir DIR | --log FILE] [--task ID] [--replay] [--json] [--key FILE] [--database-url URL | --state-dir DIR]',
};

export const exportSpec: CommandSpec = {
  name: 'export',
  summary: 'write a ledger as JSON lines (one frame per line, hashes kept)',
  usage: 'crustcore export [--dir DIR | --log FILE] --format jsonl [--redacted]',
};

export const diffSpec: CommandSpec = {
  name: 'diff',
  summary: "show or export a task's patch (git apply accepts the export)",
  usage: 'crustcore diff TASK [--export FILE] [--stat] [--json] [--home DIR]',
};

export const recoverSpec: CommandSpec = {
  name: 'recover',
  summary: 'roll back applies interrupted by a crash (idempotent)',
  usage: 'crustcore recover [--home DIR | --journal DIR] [--json]',
};

export const gcSpec: CommandSpec = {
  name: 'gc',
  summary: 'remove worktrees left by crashed or killed runs',
  usage: 'crustcore gc [--home DIR] [--json]',
};

export const doctorSpec: CommandSpec = {
  name: 'doctor',
  summary: 'check which sandbox backend works here, and how to fix it',
  usage: 'crustcore doctor [--json]',
};

/** In the order `--help` lists them (core-table.ts pairs each with its loader, in this order). */
export const CORE_SPECS: readonly CommandSpec[] = [
  demoSpec,
  runSpec,
  inspectSpec,
  exportSpec,
  diffSpec,
  recoverSpec,
  gcSpec,
  doctorSpec,
];
