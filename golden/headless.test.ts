/**
 * Headless output as CI reads it: a real `crustcore run` (real git, bubblewrap,
 * ledger; a scripted shell worker, and the native agent against a scripted
 * model server on 127.0.0.1) prints `--output-format stream-json`, and a
 * small parser written against Claude Code's documented stream-json —
 * knowing nothing of CrustCore — must read it: a `system`/`init` line first,
 * a `result` line last with cost, usage, duration and session id, unknown
 * line types skipped. Every line must also decode with CrustCore's own
 * schema (render/headless-schema.ts) without a field the schema does not name.
 * Controls: the stream CrustCore printed before this schema (its `event` and
 * `note` lines alone) fails the parser, and so does a result line without
 * its cost.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as t from 'io-ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { HeadlessLine, RunJson } from '../packages/crustcore/src/render/headless-schema.js';
import { CALC_REPO } from './agent/harness.js';
import { type ModelServer, startModelServer } from './agent/model-server.js';
import { buildCli, makeRepo, NODE_REPO, type Sandbox } from './cli-harness.js';
import { startCli } from './honest-harness.js';

beforeAll(() => buildCli(), 60_000);

// ─── A Claude Code stream-json reader (independent of CrustCore's code) ──────

interface ClaudeRun {
  readonly sessionId: string;
  readonly model: unknown;
  readonly tools: readonly string[];
  readonly texts: readonly string[];
  readonly toolUses: readonly { readonly id: string; readonly name: string }[];
  readonly toolResults: readonly { readonly toolUseId: string; readonly isError: boolean }[];
  readonly result: Record<string, unknown>;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function need(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Error(`not Claude Code stream-json: ${what}`);
}

/** Reads the assistant/user message lines a Claude Code consumer cares about. */
function readMessage(
  message: Record<string, unknown>,
  run: { texts: string[]; toolUses: ClaudeRun['toolUses'][number][]; toolResults: ClaudeRun['toolResults'][number][] },
  type: string,
): void {
  need(isRecord(message.message) && Array.isArray(message.message.content), `${type} without message.content`);
  for (const block of message.message.content as unknown[]) {
    need(isRecord(block) && typeof block.type === 'string', `${type} content block without a type`);
    if (block.type === 'text') {
      need(typeof block.text === 'string', 'text block without text');
      run.texts.push(block.text);
    } else if (block.type === 'tool_use') {
      need(typeof block.id === 'string' && typeof block.name === 'string' && isRecord(block.input), 'bad tool_use');
      run.toolUses.push({ id: block.id, name: block.name });
    } else if (block.type === 'tool_result') {
      need(typeof block.tool_use_id === 'string', 'tool_result without tool_use_id');
      need(
        run.toolUses.some((use) => use.id === block.tool_use_id),
        'tool_result for an unknown tool_use',
      );
      run.toolResults.push({ toolUseId: block.tool_use_id, isError: block.is_error === true });
    }
  }
}

function checkResult(result: Record<string, unknown>, sessionId: string): void {
  need(result.subtype === 'success' || String(result.subtype).startsWith('error_'), 'result subtype');
  need(typeof result.is_error === 'boolean' && result.is_error === (result.subtype !== 'success'), 'is_error');
  need(typeof result.duration_ms === 'number' && typeof result.num_turns === 'number', 'duration_ms/num_turns');
  need(result.session_id === sessionId, 'result.session_id is not the init session_id');
  need(typeof result.result === 'string', 'result text');
  // Claude Code always knows its cost; a reader must still get the field (null = not reported).
  need('total_cost_usd' in result, 'no total_cost_usd');
  need(typeof result.total_cost_usd === 'number' || result.total_cost_usd === null, 'total_cost_usd type');
  need(isRecord(result.usage) && 'input_tokens' in result.usage && 'output_tokens' in result.usage, 'usage');
}

/** Claude Code's stream-json: `system`/`init` first, `result` last, other types skipped. */
function readClaudeStream(stdout: string): ClaudeRun {
  const values = stdout
    .split('\n')
    .filter((text) => text.trim() !== '')
    .map((text) => JSON.parse(text) as unknown);
  need(
    values.every((value) => isRecord(value) && typeof value.type === 'string'),
    'a line without a type',
  );
  const lines = values as Record<string, unknown>[];
  const [init] = lines;
  need(init?.type === 'system' && init.subtype === 'init', 'the first line is not system/init');
  need(typeof init.session_id === 'string' && typeof init.cwd === 'string', 'init session_id/cwd');
  need(Array.isArray(init.tools) && 'model' in init, 'init tools/model');
  const last = lines.at(-1) as Record<string, unknown>;
  need(last.type === 'result', 'the last line is not result');
  checkResult(last, init.session_id);
  need(lines.filter((value) => value.type === 'result').length === 1, 'more than one result');
  const run = {
    texts: [] as string[],
    toolUses: [] as { id: string; name: string }[],
    toolResults: [] as { toolUseId: string; isError: boolean }[],
  };
  for (const value of lines) {
    if (value.type === 'assistant' || value.type === 'user') readMessage(value, run, value.type);
    // Any other type (CrustCore's verify, approval, apply, event, note, agent) is not ours: skipped.
  }
  return { sessionId: init.session_id, model: init.model, tools: init.tools as string[], ...run, result: last };
}

// ─── CrustCore's own schema ──────────────────────────────────────────────────

/** Decodes with an exact codec and requires nothing to have been stripped: no undocumented field. */
function decodeExactly<C extends t.Mixed>(codec: C, value: unknown): t.TypeOf<C> {
  const decoded = codec.decode(value);
  if (decoded._tag === 'Left') throw new Error(`does not decode: ${JSON.stringify(value).slice(0, 300)}`);
  expect(decoded.right).toEqual(value);
  return decoded.right;
}

const lineTypes = (stdout: string): string[] =>
  stdout
    .trim()
    .split('\n')
    .map((text) => String((JSON.parse(text) as { type: unknown }).type));

function runCli(box: Sandbox, args: readonly string[]) {
  return startCli(box, args).exited;
}

const FIX_ADD = "sed -i 's/a - b/a + b/' src/math.js";

const EXTERNAL = ['run', '--goal', 'fix add', '--worker', `sh -c "${FIX_ADD}"`];
let externalStream: ReturnType<typeof runCli> | undefined;
/** One stream-json run with an external worker, read by the first test and the controls. */
const external = (): ReturnType<typeof runCli> => {
  externalStream ??= runCli(makeRepo(NODE_REPO), [...EXTERNAL, '--approve', 'auto', '--output-format', 'stream-json']);
  return externalStream;
};

describe('stream-json: a Claude Code parser reads a real crustcore run', () => {
  it('an external worker: init, verify/approval/apply lines, a success result; usage honestly null', async () => {
    const [stream, json] = await Promise.all([
      external(),
      // Another task on a copy of the repository, for the --json fields (deny: verified, nothing applied).
      runCli(makeRepo(NODE_REPO), [...EXTERNAL, '--approve', 'deny', '--json']),
    ]);
    expect(stream.status, stream.stderr).toBe(0);
    const run = readClaudeStream(stream.stdout);
    expect(run.result).toMatchObject({ subtype: 'success', is_error: false, outcome: 'completed', exit_code: 0 });
    expect(run.result.total_cost_usd).toBeNull();
    expect(run.result.usage).toEqual({ input_tokens: null, output_tokens: null });
    expect(run.result.num_turns).toBe(1);
    expect(run.sessionId).toMatch(/^t_/);
    for (const value of stream.stdout.trim().split('\n')) decodeExactly(HeadlessLine, JSON.parse(value));
    const types = lineTypes(stream.stdout);
    for (const own of ['verify', 'approval', 'apply', 'event']) expect(types).toContain(own);
    // Every line names the session, as Claude Code's do.
    for (const value of stream.stdout.trim().split('\n'))
      expect((JSON.parse(value) as { session_id: unknown }).session_id).toBe(run.sessionId);

    expect(json.status, json.stderr).toBe(4);
    const object = decodeExactly(RunJson, JSON.parse(json.stdout.trim()));
    expect(object).toMatchObject({ outcome: 'denied', usage: null, costUsd: null, schemaVersion: 1 });
    expect(object.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('the native agent: assistant text and tool_use, user tool_result, and the priced usage totals', async () => {
    const [stream, text] = await Promise.all([nativeRun('stream-json'), nativeRun('text')]);
    expect(stream.status, stream.stderr).toBe(0);
    const run = readClaudeStream(stream.stdout);
    expect(run.tools).toContain('edit_file');
    expect(run.texts).toContain('Reading the code.');
    expect(run.toolUses.map((use) => use.name)).toEqual(['read_file', 'edit_file', 'edit_file']);
    expect(run.toolResults.map((result) => result.isError)).toEqual([false, false, false]);
    for (const value of stream.stdout.trim().split('\n')) decodeExactly(HeadlessLine, JSON.parse(value));
    // The server answered each request with 900 prompt and 40 completion tokens, priced 3 / 15 USD per million.
    const requests = stream.requests;
    expect(requests).toBeGreaterThanOrEqual(3);
    expect(run.result.num_turns).toBe(requests);
    expect(run.result.usage).toEqual({ input_tokens: 900 * requests, output_tokens: 40 * requests });
    expect(run.result.total_cost_usd).toBeCloseTo((requests * (900 * 3 + 40 * 15)) / 1_000_000, 9);

    // Text mode: one line with the totals of its own task.
    expect(text.status, text.stderr).toBe(0);
    const cost = ((text.requests * (900 * 3 + 40 * 15)) / 1_000_000).toFixed(4);
    const tokensIn = `${((900 * text.requests) / 1_000).toFixed(1)}k`;
    expect(text.stdout).toContain(
      `tokens ${tokensIn} in / ${40 * text.requests} out · $${cost} · ${text.requests} model turn(s)`,
    );
  });

  it('controls: the old stream (its event and note lines only) and a result without its cost fail the parser', async () => {
    const stream = await external();
    expect(stream.status, stream.stderr).toBe(0);
    expect(() => readClaudeStream(stream.stdout)).not.toThrow();
    const lines = stream.stdout.trim().split('\n');
    // What CrustCore printed before this schema: only its `event` and `note` lines.
    const old = lines.filter((line) =>
      ['event', 'note'].includes(String((JSON.parse(line) as { type: unknown }).type)),
    );
    expect(old.length).toBeGreaterThan(3);
    expect(() => readClaudeStream(old.join('\n'))).toThrow(/system\/init/);
    const withoutCost = lines.map((line) => {
      const value = JSON.parse(line) as Record<string, unknown>;
      if (value.type === 'result') delete value.total_cost_usd;
      return JSON.stringify(value);
    });
    expect(() => readClaudeStream(withoutCost.join('\n'))).toThrow(/total_cost_usd/);
  });
});

const SCRIPT = [
  { text: 'Reading the code.', calls: [{ name: 'read_file', arguments: { path: 'src/calc.js' } }] },
  {
    text: 'Fixing both.',
    calls: [
      {
        name: 'edit_file',
        arguments: { path: 'src/calc.js', oldText: '  return a - b;', newText: '  return a + b;', startLine: 3 },
      },
      {
        name: 'edit_file',
        arguments: { path: 'src/calc.js', oldText: '  return a + b;', newText: '  return a * b;', startLine: 7 },
      },
    ],
  },
  { text: 'Both functions fixed.' },
];

/**
 * The native agent on the calculator repository, its model a scripted server of its own (on
 * 127.0.0.1) with a priced registry; `requests` is how many model requests the server answered.
 */
async function nativeRun(format: 'stream-json' | 'text') {
  const server = await startModelServer((_request, index) => SCRIPT[index] ?? { text: 'done' });
  try {
    const box = makeRepo(CALC_REPO);
    const registry = join(box.root, 'models.json');
    writeFileSync(registry, pricedRegistry(server));
    const exited = await runCli(box, [
      'run',
      '--goal',
      'make the tests pass',
      '--backend',
      'native',
      '--models-config',
      registry,
      '--approve',
      'auto',
      '--verify',
      'node --test',
      // Repository memory is not what this file tests (the external runs keep it on): less work per run.
      '--no-memory',
      '--output-format',
      format,
    ]);
    return { ...exited, requests: server.requests.length };
  } finally {
    await server.close();
  }
}

function pricedRegistry(server: ModelServer): string {
  const model = {
    id: 'scripted-model',
    tools: true,
    contextWindow: 200000,
    roles: ['implement', 'summarize'],
    prices: { inputPerMillion: 3, outputPerMillion: 15 },
  };
  return JSON.stringify({
    version: 1,
    defaultRole: 'implement',
    providers: [{ id: 'scripted', kind: 'openai-compatible', baseUrl: server.baseUrl, models: [model] }],
  });
}
