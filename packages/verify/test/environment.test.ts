/**
 * Environment detection and decisions on real directories: ecosystems and
 * workspaces, the project config decoder, "installed and matching" vs not,
 * and the dependencies-changed risk (dependency fields, not scripts).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_NPM_REGISTRY,
  dependencyRisk,
  detectEcosystems,
  directoryTree,
  prepareEnvironment,
  readEnvironmentConfig,
} from '../src/index.js';

const scratch = mkdtempSync(join(tmpdir(), 'cc-environment-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let count = 0;

function tree(files: Readonly<Record<string, string>>): string {
  count += 1;
  const root = join(scratch, `t${count}`);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  mkdirSync(root, { recursive: true });
  return root;
}

const MONO = {
  'package.json': JSON.stringify({
    name: 'm',
    workspaces: ['packages/*', 'tools/**'],
    devDependencies: { a: '1.0.0' },
  }),
  'package-lock.json': '{"lockfileVersion":3}',
  'packages/one/package.json': '{"name":"one","dependencies":{"b":"2.0.0"}}',
  'packages/two/package.json': '{"name":"two"}',
  'packages/not-a-package/readme.md': '',
  'Cargo.toml': '[package]\n',
};

describe('detectEcosystems', () => {
  it('finds npm with workspaces, and names what it cannot do', async () => {
    const root = tree(MONO);
    const report = await detectEcosystems(directoryTree(root), directoryTree(root));
    expect(report.ecosystems).toEqual([
      { kind: 'npm', lockfile: 'package-lock.json', workspaces: ['.', 'packages/one', 'packages/two'] },
    ]);
    expect(report.unsupported.join('\n')).toMatch(/tools\/\*\*.*not supported/);
    expect(report.unsupported.join('\n')).toMatch(/Rust \(Cargo\)/);
  });

  it('finds a Python venv and its lock tool; pnpm and yarn are bind-only', async () => {
    const root = tree({ 'uv.lock': '', 'pyproject.toml': '', '.venv/pyvenv.cfg': 'home = /usr/bin\n' });
    const report = await detectEcosystems(directoryTree(root), directoryTree(root));
    expect(report.ecosystems).toMatchObject([{ kind: 'python', venv: '.venv', tool: 'uv' }]);
    const pnpm = tree({ 'package.json': '{}', 'pnpm-lock.yaml': '' });
    const found = await detectEcosystems(directoryTree(pnpm), directoryTree(pnpm));
    expect(found.ecosystems).toMatchObject([{ kind: 'pnpm' }]);
    expect(found.unsupported.join('\n')).toMatch(/cannot run pnpm setup/);
  });
});

describe('readEnvironmentConfig', () => {
  it('decodes a valid file and refuses bad shapes with a typed error saying what to write', () => {
    const good = tree({ '.crustcore/environment.json': '{"files":[".env.test"],"setup":["npm","ci"]}' });
    expect(readEnvironmentConfig(good)).toMatchObject({ right: { files: ['.env.test'], setup: ['npm', 'ci'] } });
    for (const bad of [
      '{"files":["../secret"]}',
      '{"files":["/etc/passwd"]}',
      '{"files":[".git/config"]}',
      '{"setup":[]}',
      '[1]',
      'nope',
    ]) {
      const root = tree({ '.crustcore/environment.json': bad });
      const decoded = readEnvironmentConfig(root);
      expect(decoded._tag, bad).toBe('Left');
      if (decoded._tag === 'Left') expect(decoded.left).toMatchObject({ _tag: 'EnvironmentConfigError' });
    }
    expect(readEnvironmentConfig(tree({}))).toEqual({ _tag: 'Right', right: {} });
  });
});

describe('prepareEnvironment', () => {
  const prepare = (userRoot: string, treeRoot: string) =>
    prepareEnvironment({
      userRoot,
      tree: directoryTree(treeRoot),
      home: join(scratch, 'home'),
      env: { PATH: '/usr/bin:/bin' },
      registryUrl: DEFAULT_NPM_REGISTRY,
    });

  it('binds the checkout node_modules at every workspace level when they match the tree', async () => {
    const user = tree({
      ...MONO,
      'node_modules/a/package.json': '{}',
      'packages/one/node_modules/b/package.json': '{}',
    });
    const prepared = await prepare(user, tree(MONO));
    if (prepared._tag === 'Left') throw new Error(prepared.left.message);
    expect(prepared.right.mode).toBe('installed');
    expect(prepared.right.binds.worktree).toEqual([
      { source: join(user, 'node_modules'), path: 'node_modules' },
      { source: join(user, 'packages/one/node_modules'), path: 'packages/one/node_modules' },
    ]);
    expect(prepared.right.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('does not bind them when the tree under test changed a dependency (a setup is needed)', async () => {
    const user = tree({ ...MONO, 'node_modules/a/package.json': '{}' });
    const changed = { ...MONO, 'packages/one/package.json': '{"name":"one","dependencies":{"b":"3.0.0"}}' };
    // No lockfile-based setup can run offline here: a setup argv that fails proves the path was taken.
    const prepared = await prepareEnvironment({
      userRoot: user,
      tree: directoryTree(tree(changed)),
      home: join(scratch, 'home2'),
      env: { PATH: '/usr/bin:/bin' },
      registryUrl: DEFAULT_NPM_REGISTRY,
      setupArgv: ['false'],
    });
    expect(prepared).toMatchObject({ left: { _tag: 'EnvironmentError' } });
    if (prepared._tag === 'Left') expect(prepared.left.message).toMatch(/setup "false" exited with 1/);
  });

  it('a project without dependencies needs nothing', async () => {
    const root = tree({ 'package.json': '{"name":"x","scripts":{"test":"node --test"}}' });
    expect(await prepare(root, root)).toMatchObject({ right: { mode: 'none', binds: { worktree: [] } } });
  });
});

describe('dependencyRisk', () => {
  const file = (path: string) => ({
    status: 'M' as const,
    path,
    oldPath: null,
    oldMode: '100644',
    newMode: '100644',
    baseBlob: null,
    newBlob: null,
    binary: false,
    fileClass: 'config' as const,
  });

  it('flags a new dependency and names it; a scripts-only edit is not a dependency change', async () => {
    const base = tree({ 'package.json': '{"name":"x","scripts":{"test":"a"},"dependencies":{"left":"1.0.0"}}' });
    const added = tree({
      'package.json': '{"name":"x","scripts":{"test":"a"},"dependencies":{"left":"1.0.0","evil":"^2"}}',
    });
    const scripts = tree({ 'package.json': '{"name":"x","scripts":{"test":"b"},"dependencies":{"left":"1.0.0"}}' });
    const risk = await dependencyRisk([file('package.json')] as never, directoryTree(base), directoryTree(added));
    expect(risk).toMatchObject({ kind: 'dependencies-changed', severity: 'needs-approval', paths: ['package.json'] });
    expect(risk?.detail).toContain('evil');
    expect(
      await dependencyRisk([file('package.json')] as never, directoryTree(base), directoryTree(scripts)),
    ).toBeNull();
    expect(
      await dependencyRisk([file('sub/package-lock.json')] as never, directoryTree(base), directoryTree(base)),
    ).toMatchObject({
      kind: 'dependencies-changed',
    });
  });
});
