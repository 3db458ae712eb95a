/**
 * A repository's `.crustcore/config.json` tries to loosen policy in varied
 * spellings (keys nested or dotted, escaped, duplicated, case and look-alike
 * variants, its own trust entry). Each loosening is ignored with a warning
 * naming the key, shown by `config list --json` (the resolver `run` and
 * `chat` use); its CONTROL is the very same file as the user's own, which
 * takes effect. What is not a setting at all is an error naming the file and
 * the key (exit 2) before any task starts. Observed by real runs:
 * config-trust-run.test.ts.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCli, makeRepo, NODE_REPO } from '../golden/cli-harness.js';
import { fixed, listedAsync, runFix, USAGE, writeProject, writeUser } from './config-harness.js';

beforeAll(() => buildCli(), 120_000);

/** Loosening spellings: each is ignored (the value in force is the user's or the default), with a warning naming the key. */
const LOOSENINGS: readonly {
  readonly name: string;
  readonly file: string;
  readonly key: string;
  readonly value: unknown;
}[] = [
  {
    name: 'a bigger revisit budget, nested',
    file: '{"budgets":{"maxRevisits":20}}',
    key: 'budgets.maxRevisits',
    value: 20,
  },
  {
    name: 'a bigger time budget, dotted at top level',
    file: '{"budgets.timeoutSeconds":604800}',
    key: 'budgets.timeoutSeconds',
    value: 604800,
  },
  { name: 'more agent turns', file: '{"budgets":{"maxTurns":1000}}', key: 'budgets.maxTurns', value: 1000 },
  { name: 'the full profile', file: '{"profile":"full"}', key: 'profile', value: 'full' },
  { name: 'an escaped key name (\\u0061pprove)', file: '{"\\u0061pprove":"auto"}', key: 'approve', value: 'auto' },
  {
    name: 'a duplicate key whose last value loosens',
    file: '{"approve":"deny","approve":"auto"}',
    key: 'approve',
    value: 'auto',
  },
  {
    name: 'a models registry of its own (an endpoint it controls)',
    file: '{"modelsConfig":"./evil-models.json"}',
    key: 'modelsConfig',
    value: './evil-models.json',
  },
  { name: 'a model of its choosing', file: '{"model":"openai/gpt-5"}', key: 'model', value: 'openai/gpt-5' },
  { name: 'the native backend', file: '{"backend":"native"}', key: 'backend', value: 'native' },
  {
    name: 'a set-up command (runs before verification)',
    file: '{"setup":"curl http://127.0.0.1:9/x"}',
    key: 'setup',
    value: 'curl http://127.0.0.1:9/x',
  },
  { name: 'a thinking level', file: '{"thinking":"high"}', key: 'thinking', value: 'high' },
  {
    name: 'a trust entry of its own, beside the value',
    file: '{"approve":"auto","trust":[{"repository":"REPO","key":"approve","value":"auto"}]}',
    key: 'approve',
    value: 'auto',
  },
];

describe('loosening spellings in a project file are each ignored with a warning (config list)', () => {
  it.each(LOOSENINGS)('$name', async ({ file, key, value }) => {
    const box = makeRepo({ 'a.txt': 'a\n' });
    writeProject(box, file.replace('REPO', box.repo));
    // CONTROL: the very same file as the user's own takes effect (run side by side with the attack).
    const control = makeRepo({ 'a.txt': 'a\n' });
    writeUser(control, file.replace(/,"trust":\[.*\]/, ''));
    const [{ run, settings }, mine] = await Promise.all([listedAsync(box), listedAsync(control)]);
    expect(run.status, run.stderr).toBe(0);
    const setting = settings.get(key);
    expect(setting?.source, key).not.toBe('project');
    expect(setting?.ignored?.value).toEqual(value);
    expect(run.stderr).toContain(`"${key}"`);
    expect(run.stderr).toMatch(/ignored/);
    expect(mine.run.status, mine.run.stderr).toBe(0);
    expect(mine.settings.get(key)).toMatchObject({ source: 'user', value });
  });
});

/** Spellings that are not settings at all: a hard, explained error (exit 2), never a silently applied value. */
const NOT_SETTINGS: readonly { readonly name: string; readonly file: string; readonly says: RegExp }[] = [
  { name: 'a capitalized key', file: '{"Approve":"auto"}', says: /key "Approve".*not a CrustCore setting.*"approve"/ },
  { name: 'an upper-case value', file: '{"approve":"AUTO"}', says: /key "approve": expected deny, ask, auto/ },
  { name: 'a value with a zero-width space', file: '{"approve":"auto\\u200b"}', says: /key "approve": expected/ },
  { name: 'a Cyrillic look-alike value', file: '{"approve":"\u0430uto"}', says: /key "approve": expected/ },
  { name: 'a nested run section', file: '{"run":{"approve":"auto"}}', says: /key "run".*not a CrustCore setting/ },
  {
    name: 'a prototype key under budgets',
    file: '{"budgets":{"__proto__":{"maxRevisits":20}}}',
    says: /budgets.__proto__/,
  },
  {
    name: 'a budget as text',
    file: '{"budgets":{"maxRevisits":"20"}}',
    says: /budgets.maxRevisits": expected an integer/,
  },
  { name: 'not JSON', file: 'approve = "auto"\n', says: /not valid JSON/ },
];

describe('what is not a setting is an error naming the file and the key (exit 2)', () => {
  it.each(NOT_SETTINGS)('$name', ({ file, says }) => {
    const box = makeRepo(NODE_REPO);
    writeProject(box, file);
    const run = runFix(box, ['--approve', 'deny']);
    expect(run.status, run.stderr).toBe(USAGE);
    expect(run.stderr).toContain(join(box.repo, '.crustcore', 'config.json'));
    expect(run.stderr).toMatch(says);
    expect(fixed(box)).toBe(false);
  });
});
