/**
 * run_command and check_syntax: every process runs in the sandbox, as an
 * argv array (never a shell string unless the profile allows a shell), inside
 * the worktree gate so no host-side tool write overlaps it. A recognized test
 * runner runs under the `verify` profile and says so to the kernel (which may
 * then allow it without asking); anything else runs under `build`.
 */
import { readText, resolveReadPath } from '@crustcore/confine';
import { classifyVerifyCommand, runSandboxed, type SandboxedResult } from '@crustcore/sandbox';
import type * as t from 'io-ts';
import { wrapUntrusted } from '../context/untrusted.js';
import type { ToolExecution } from '../tool-gate.js';
import type { CheckSyntaxArgs, RunCommandArgs } from './tool-args.js';
import { execution, type ToolPlan } from './tool-plan.js';
import { type AgentWorkspace, type CommandProfile, clipMiddle, describePathError } from './workspace.js';

/** Bound on command output shown to the model (head and tail kept). */
export const MAX_COMMAND_OUTPUT_CHARS = 24_000;
const DEFAULT_COMMAND_TIMEOUT_SECONDS = 300;
const SYNTAX_TIMEOUT_MS = 60_000;
const COMMAND_OUTPUT_BYTES = 1024 * 1024;

function formatRun(
  argv: readonly string[],
  profile: CommandProfile,
  result: SandboxedResult,
  scrub: (s: string) => string,
): string {
  const status = result.timedOut
    ? 'timed out'
    : result.cancelled
      ? 'cancelled'
      : result.startError !== null
        ? `did not start (${result.startError.message})`
        : result.exitCode === null
          ? `killed by ${result.signal ?? 'a signal'}`
          : `exit code ${result.exitCode}`;
  const parts = [`${status} (${Math.round(result.durationMs)} ms, ${profile} sandbox, no network)`];
  const stdout = clipMiddle(result.stdout.text, MAX_COMMAND_OUTPUT_CHARS);
  const stderr = clipMiddle(result.stderr.text, MAX_COMMAND_OUTPUT_CHARS / 2);
  const label = argv.join(' ').slice(0, 200);
  if (stdout !== '') parts.push(wrapUntrusted(`stdout of ${label}`, scrub(stdout)));
  if (stderr !== '') parts.push(wrapUntrusted(`stderr of ${label}`, scrub(stderr)));
  return parts.join('\n');
}

async function runInSandbox(
  workspace: AgentWorkspace,
  profile: CommandProfile,
  argv: readonly [string, ...string[]],
  cwd: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<{ readonly result: SandboxedResult } | { readonly refusal: string }> {
  const cap = workspace.sandbox(profile);
  if (cap._tag === 'Left') return { refusal: `the sandbox is unavailable: ${cap.left}` };
  const path = workspace.commandPath();
  const gated = await workspace.gate.withSandboxRun(
    () =>
      runSandboxed(cap.right, {
        argv,
        worktreeRoot: workspace.path,
        cwd,
        ...(path === null ? {} : { env: { PATH: path } }),
        timeoutMs,
        maxOutputBytes: Math.min(COMMAND_OUTPUT_BYTES, cap.right.profile.maxOutputBytes),
        signal,
      }),
    { signal },
  );
  if (gated._tag === 'Left') return { refusal: gated.left.message };
  const ran = gated.right;
  if (ran._tag === 'Left') return { refusal: `${ran.left.reason}: ${ran.left.message}` };
  workspace.recordCommand(argv, ran.right.exitCode);
  return { result: ran.right };
}

export function planRunCommand(workspace: AgentWorkspace, args: t.TypeOf<typeof RunCommandArgs>): ToolPlan {
  const argv = args.argv as unknown as readonly [string, ...string[]];
  const recognized = classifyVerifyCommand(argv)._tag === 'TestRunner';
  const profile: CommandProfile = recognized ? 'verify' : 'build';
  const relativeCwd = args.cwd === undefined ? '.' : workspace.operationPath(args.cwd);
  const absoluteCwd = relativeCwd === '.' ? workspace.path : workspace.root.join(relativeCwd);
  return {
    operation: { op: 'exec', argv: [...argv], cwd: absoluteCwd, profile, recognizedRunner: recognized },
    reads: null,
    writes: null,
    mutates: true,
    execute: async (signal): Promise<ToolExecution> => {
      if (args.cwd !== undefined) {
        const confined = resolveReadPath(workspace.readCap, args.cwd);
        if (confined._tag === 'Left') return execution(describePathError(confined.left), false);
      }
      const timeoutMs = (args.timeoutSeconds ?? DEFAULT_COMMAND_TIMEOUT_SECONDS) * 1000;
      const ran = await runInSandbox(workspace, profile, argv, absoluteCwd, timeoutMs, signal);
      if ('refusal' in ran) return execution(`not run: ${ran.refusal}`, false);
      const text = formatRun(argv, profile, ran.result, workspace.scrub);
      const ok = ran.result.exitCode === 0 && !ran.result.timedOut;
      return { text, ok, outputBytes: ran.result.stdout.totalBytes + ran.result.stderr.totalBytes };
    },
  };
}

type SyntaxCheck =
  | { readonly kind: 'process'; readonly argv: readonly [string, ...string[]]; readonly profile: CommandProfile }
  | { readonly kind: 'json' }
  | { readonly kind: 'unsupported'; readonly reason: string };

/** ES module syntax at the start of a line (how a `.js` file is told apart from CommonJS). */
const ESM_SYNTAX = /^\s*(import\s*[\w{*'"]|export\s)/m;
/** Bound on what is read to tell module syntax apart. */
const DETECT_BYTES = 1024 * 1024;

/**
 * How to check `path`. `node --check file.js` skips files Node 20 detects as
 * ES modules, so module code is parsed from stdin with an explicit input
 * type — redirected inside the sandbox, so the recorded argv names the file.
 */
export function syntaxCheckFor(path: string, moduleSyntax: boolean): SyntaxCheck {
  const lower = path.toLowerCase();
  if (lower.endsWith('.mjs') || (lower.endsWith('.js') && moduleSyntax)) {
    return {
      kind: 'process',
      argv: ['sh', '-c', 'exec node --input-type=module --check < "$1"', 'check_syntax', path],
      profile: 'build',
    };
  }
  if (/\.c?js$/.test(lower)) return { kind: 'process', argv: ['node', '--check', path], profile: 'verify' };
  // `-m ast` parses without writing __pycache__ into the worktree (py_compile would).
  if (lower.endsWith('.py')) return { kind: 'process', argv: ['python3', '-m', 'ast', path], profile: 'verify' };
  if (lower.endsWith('.json')) return { kind: 'json' };
  return { kind: 'unsupported', reason: 'check_syntax handles .js, .mjs, .cjs, .py and .json files' };
}

function readConfined(
  workspace: AgentWorkspace,
  input: string,
  maxFileBytes?: number,
): { readonly text: string } | { readonly refusal: string } {
  const confined = resolveReadPath(workspace.readCap, input);
  if (confined._tag === 'Left') return { refusal: describePathError(confined.left) };
  const read = readText(workspace.readCap, confined.right, maxFileBytes === undefined ? {} : { maxFileBytes });
  return read._tag === 'Left' ? { refusal: `${read.left._tag}: ${read.left.message}` } : { text: read.right.text };
}

export function planCheckSyntax(workspace: AgentWorkspace, args: t.TypeOf<typeof CheckSyntaxArgs>): ToolPlan | string {
  const path = workspace.operationPath(args.path);
  // Telling module code apart needs its text: a bounded confined read (the
  // agent may read any worktree file; nothing of it is shown here).
  const lower = path.toLowerCase();
  const probe = lower.endsWith('.js') ? readConfined(workspace, args.path, DETECT_BYTES) : null;
  const check = syntaxCheckFor(path, probe !== null && 'text' in probe && ESM_SYNTAX.test(probe.text));
  if (check.kind === 'unsupported') return check.reason;
  if (check.kind === 'json') {
    return {
      operation: { op: 'fs.read', path },
      reads: null,
      writes: null,
      mutates: false,
      execute: async (signal) => {
        const gated = await workspace.gate.withToolWrite(() => readConfined(workspace, args.path), { signal });
        if (gated._tag === 'Left') return execution(`not run: ${gated.left.message}`, false);
        const read = gated.right;
        if ('refusal' in read) return execution(read.refusal, false);
        try {
          JSON.parse(read.text);
          return execution(`${path}: valid JSON`, true);
        } catch (error) {
          return execution(`${path}: invalid JSON: ${workspace.scrub((error as Error).message)}`, false);
        }
      },
    };
  }
  const { argv, profile } = check;
  return {
    operation: { op: 'exec', argv: [...argv], cwd: workspace.path, profile, recognizedRunner: false },
    reads: null,
    writes: null,
    mutates: false,
    execute: async (signal) => {
      const confined = resolveReadPath(workspace.readCap, args.path);
      if (confined._tag === 'Left') return execution(describePathError(confined.left), false);
      const ran = await runInSandbox(workspace, profile, argv, workspace.path, SYNTAX_TIMEOUT_MS, signal);
      if ('refusal' in ran) return execution(`not run: ${ran.refusal}`, false);
      const result = ran.result;
      if (result.exitCode === 0) return execution(`${path}: syntax OK`, true);
      const errors = clipMiddle(result.stderr.text, MAX_COMMAND_OUTPUT_CHARS / 2);
      return execution(
        `${path}: syntax errors (exit ${result.exitCode ?? result.signal})\n${wrapUntrusted('syntax check output', workspace.scrub(errors))}`,
        false,
      );
    },
  };
}
