/**
 * Config files (docs/config.md): where they are, precedence (CLI > project >
 * user > defaults), the trust rule for the repository's own file, and
 * `crustcore config get|set|unset|list|trust` on real files in real git
 * repositories. The attacks on a hostile project file are in
 * redteam/config-trust-*.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UsageError } from '../src/cli/command.js';
import { type Io, makeStyle } from '../src/cli/output.js';
import { configCommand } from '../src/commands/config.js';
import { ConfigFileError, parseDocument } from '../src/config/document.js';
import { userConfigPath } from '../src/config/files.js';
import { CONFIG_KEYS, keySpec } from '../src/config/keys.js';
import { valuesWithConfig } from '../src/config/load.js';
import { type Layers, loosening, resolveSettings } from '../src/config/resolve.js';

let root: string;
let repo: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'crustcore-config-')));
  repo = join(root, 'repo');
  mkdirSync(repo);
  execFileSync('git', ['init', '-q', repo]);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function capture(env: NodeJS.ProcessEnv = { HOME: root }): { io: Io; out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  stderr.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const io: Io = {
    stdout,
    stderr,
    stdin: new PassThrough(),
    env,
    cwd: repo,
    out: makeStyle(stdout, env),
    err: makeStyle(stderr, env),
  };
  return { io, out: () => out, err: () => err };
}

const layers = (user: string | null, project: string | null, cli: Record<string, string> = {}): Layers => ({
  cli: new Map(Object.entries(cli)),
  user: user === null ? null : parseDocument('user.json', user, 'user'),
  userFile: 'user.json',
  project: project === null ? null : parseDocument('project.json', project, 'project'),
  projectFile: 'project.json',
  repository: '/repo',
});

const value = (l: Layers, key: string) => resolveSettings(l).find((s) => s.key === key);

describe('where the user file is', () => {
  it('an absolute XDG_CONFIG_HOME, else ~/.config (a relative XDG_CONFIG_HOME is ignored, as the XDG spec says)', () => {
    expect(userConfigPath({ XDG_CONFIG_HOME: '/x/cfg', HOME: '/h' })).toBe('/x/cfg/crustcore/config.json');
    expect(userConfigPath({ XDG_CONFIG_HOME: 'relative', HOME: '/h' })).toBe('/h/.config/crustcore/config.json');
    expect(userConfigPath({ HOME: '/h' })).toBe('/h/.config/crustcore/config.json');
  });
});

describe('precedence: CLI > project > user > defaults', () => {
  it('each layer wins over the ones below it, and says where the value came from', () => {
    expect(value(layers(null, null), 'budgets.maxTurns')).toMatchObject({ value: 40, source: 'default' });
    expect(value(layers('{"budgets":{"maxTurns":30}}', null), 'budgets.maxTurns')).toMatchObject({
      value: 30,
      source: 'user',
    });
    const tightened = layers('{"budgets":{"maxTurns":30}}', '{"budgets":{"maxTurns":10}}');
    expect(value(tightened, 'budgets.maxTurns')).toMatchObject({ value: 10, source: 'project' });
    const typed = layers('{"budgets":{"maxTurns":30}}', '{"budgets":{"maxTurns":10}}', { 'budgets.maxTurns': '99' });
    expect(value(typed, 'budgets.maxTurns')).toMatchObject({ value: '99', source: 'cli' });
  });

  it('a project value is judged against what it replaces: the user value, else the default', () => {
    // The user chose auto: the project may tighten to ask; with no user value, ask is the default and auto loosens.
    expect(value(layers('{"approve":"auto"}', '{"approve":"ask"}'), 'approve')).toMatchObject({
      value: 'ask',
      source: 'project',
    });
    expect(value(layers(null, '{"approve":"auto"}'), 'approve')).toMatchObject({
      value: 'ask',
      source: 'default',
      ignored: { value: 'auto' },
    });
    expect(value(layers('{"profile":"full"}', '{"profile":"supervised"}'), 'profile')).toMatchObject({
      source: 'project',
    });
    expect(value(layers('{"profile":"readonly"}', '{"profile":"supervised"}'), 'profile')).toMatchObject({
      value: 'readonly',
      source: 'user',
    });
  });

  it('the rule per kind of key', () => {
    const approve = keySpec('approve');
    const budget = keySpec('budgets.timeoutSeconds');
    const backend = keySpec('backend');
    const verify = keySpec('verify');
    const thinking = keySpec('thinking');
    if (!approve || !budget || !backend || !verify || !thinking) throw new Error('keys');
    expect(loosening(approve, 'deny', 'ask')).toBeNull();
    expect(loosening(approve, 'auto', 'ask')).toMatch(/less strict/);
    expect(loosening(budget, 60, 1_800)).toBeNull();
    expect(loosening(budget, 1_801, 1_800)).toMatch(/raises the budget/);
    expect(loosening(backend, 'native', undefined)).toMatch(/only a person/);
    expect(loosening(backend, 'native', 'native')).toBeNull();
    expect(loosening(verify, 'sh -c anything', 'npm test')).toBeNull();
    // Nothing to replace: only the strictest choice is certainly no loosening.
    expect(loosening(thinking, 'off', undefined)).toBeNull();
    expect(loosening(thinking, 'low', undefined)).toMatch(/less strict/);
  });

  it('trust accepts that exact value for that repository only', () => {
    const trust = (entry: object) => JSON.stringify({ trust: [entry] });
    const project = '{"approve":"auto"}';
    expect(
      value(layers(trust({ repository: '/repo', key: 'approve', value: 'auto' }), project), 'approve'),
    ).toMatchObject({
      value: 'auto',
      source: 'project',
      trusted: true,
    });
    for (const other of [
      { repository: '/other', key: 'approve', value: 'auto' },
      { repository: '/repo', key: 'profile', value: 'auto' },
      { repository: '/repo', key: 'approve', value: 'ask' },
    ])
      expect(value(layers(trust(other), project), 'approve')?.source).toBe('default');
  });

  it('every key has a flag, a codec and a rule; the defaults decode with their own codec', () => {
    for (const spec of CONFIG_KEYS) {
      expect(spec.flag).toMatch(/^--[a-z-]+$/);
      if (spec.defaultValue !== undefined) expect(spec.codec.is(spec.defaultValue), spec.key).toBe(true);
    }
  });
});

describe('decoding a file', () => {
  it('names the file, the key, what was expected and what to do', () => {
    const bad = (text: string): ConfigFileError => {
      try {
        parseDocument('/p/config.json', text, 'user');
      } catch (error) {
        if (error instanceof ConfigFileError) return error;
      }
      throw new Error(`accepted: ${text}`);
    };
    expect(bad('{"aprove":"ask"}').message).toMatch(
      /^\/p\/config.json: key "aprove": is not a CrustCore setting\. Did you mean "approve"\?/,
    );
    expect(bad('{"budgets":{"maxTurns":0}}').message).toMatch(
      /key "budgets.maxTurns": expected an integer from 1 to 1000, got 0/,
    );
    expect(bad('[1]').message).toMatch(/is not a JSON object/);
    expect(bad('{"trust":[{"repository":1}]}').key).toBe('trust');
  });
});

describe('crustcore config', () => {
  it('set writes the user file (XDG), get reads it back, list says where each value came from', async () => {
    const env = { HOME: root, XDG_CONFIG_HOME: join(root, 'xdg') };
    const set = capture(env);
    expect(await configCommand.run(['set', 'approve', 'deny'], set.io)).toBe(0);
    expect(await configCommand.run(['set', 'budgets.maxTurns', '12'], set.io)).toBe(0);
    expect(JSON.parse(readFileSync(join(root, 'xdg', 'crustcore', 'config.json'), 'utf8'))).toEqual({
      approve: 'deny',
      budgets: { maxTurns: 12 },
    });
    const get = capture(env);
    expect(await configCommand.run(['get', 'budgets.maxTurns'], get.io)).toBe(0);
    expect(get.out()).toBe('12\n');
    const list = capture(env);
    await configCommand.run(['list', '--json'], list.io);
    const settings = (JSON.parse(list.out()) as { settings: { key: string; source: string }[] }).settings;
    expect(settings.find((s) => s.key === 'approve')?.source).toBe('user');
    expect(settings.find((s) => s.key === 'profile')?.source).toBe('default');
    expect(await configCommand.run(['unset', 'approve'], set.io)).toBe(0);
    expect(JSON.parse(readFileSync(join(root, 'xdg', 'crustcore', 'config.json'), 'utf8'))).toEqual({
      budgets: { maxTurns: 12 },
    });
  });

  it('set --project writes the repository file; trust records the exact value in the user file', async () => {
    const c = capture();
    expect(await configCommand.run(['set', 'approve', 'auto', '--project'], c.io)).toBe(0);
    expect(JSON.parse(readFileSync(join(repo, '.crustcore', 'config.json'), 'utf8'))).toEqual({ approve: 'auto' });
    // Written, but it loosens: the person is told at once that it will be ignored.
    expect(c.err()).toMatch(/"approve": "auto" is less strict than "ask", so it is ignored/);
    const before = await valuesWithConfig({}, ['approve'], repo, c.io);
    expect(before.values).toEqual({});
    expect(c.err()).toMatch(/"approve": "auto" .*ignored.*crustcore config trust approve/);
    expect(await configCommand.run(['trust', 'approve'], c.io)).toBe(0);
    const after = await valuesWithConfig({}, ['approve'], repo, c.io);
    expect(after.values).toEqual({ approve: 'auto' });
    // Trusted by the person: it counts as theirs.
    expect(after.fromConfig.get('approve')).toBe('user');
    const user = JSON.parse(readFileSync(join(root, '.config', 'crustcore', 'config.json'), 'utf8')) as object;
    expect(user).toEqual({ trust: [{ repository: repo, key: 'approve', value: 'auto' }] });
  });

  it('bad keys, values and actions are usage errors that say what to do', async () => {
    const c = capture();
    await expect(configCommand.run(['set', 'approve', 'AUTO'], c.io)).rejects.toThrow(/expected deny, ask, auto/);
    await expect(configCommand.run(['get', 'aprove'], c.io)).rejects.toThrow(
      /unknown config key "aprove" \(did you mean approve\?\)/,
    );
    await expect(configCommand.run(['get', 'budgets.maxturns'], c.io)).rejects.toThrow(
      /\(did you mean budgets.maxTurns\?\)/,
    );
    await expect(configCommand.run(['frobnicate'], c.io)).rejects.toBeInstanceOf(UsageError);
    await expect(configCommand.run(['set', 'approve'], c.io)).rejects.toThrow(/takes a key and a value/);
    await expect(configCommand.run(['trust', 'approve'], c.io)).rejects.toThrow(/does not set approve/);
    writeFileSync(join(root, 'not-json'), '');
    mkdirSync(join(root, '.config', 'crustcore'), { recursive: true });
    writeFileSync(join(root, '.config', 'crustcore', 'config.json'), '{ nope');
    await expect(configCommand.run(['list'], c.io)).rejects.toThrow(/config\.json: is not valid JSON/);
  });

  it("a project verify is the repository's suggestion until the user trusts that exact command", async () => {
    writeFileSync(join(repo, 'x'), '');
    mkdirSync(join(repo, '.crustcore'));
    writeFileSync(join(repo, '.crustcore', 'config.json'), '{"verify":"make check"}');
    const c = capture();
    const before = await valuesWithConfig({}, ['verify'], repo, c.io);
    expect(before.values).toEqual({ verify: 'make check' });
    expect(before.fromConfig.get('verify')).toBe('project');
    expect(await configCommand.run(['trust', 'verify'], c.io)).toBe(0);
    expect((await valuesWithConfig({}, ['verify'], repo, c.io)).fromConfig.get('verify')).toBe('user');
  });

  it('a relative modelsConfig is from the file that names it', async () => {
    mkdirSync(join(root, '.config', 'crustcore'), { recursive: true });
    writeFileSync(join(root, '.config', 'crustcore', 'config.json'), '{"modelsConfig":"models.json"}');
    const c = capture();
    const { values } = await valuesWithConfig({}, ['models-config'], repo, c.io);
    expect(values).toEqual({ 'models-config': join(root, '.config', 'crustcore', 'models.json') });
  });
});
