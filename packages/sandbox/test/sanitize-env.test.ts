import { describe, expect, it } from 'vitest';
import { type EnvContext, isDangerousEnvName, SANDBOX_PROFILES, sanitizeEnvironment } from '../src/index.js';
import { makeWorktree } from './worktree.js';

function context(worktreeRoot: string, overrides: Partial<EnvContext> = {}): EnvContext {
  const profile = SANDBOX_PROFILES.verify;
  return {
    policy: profile.envPolicy,
    baseEnv: profile.baseEnv,
    home: '/home/sandbox',
    tmpdir: '/tmp',
    defaultPath: '/usr/bin:/bin',
    worktreeRoot,
    allowWorktreeInPathLists: false,
    hostPathOf: (path) =>
      ['/usr', '/bin', worktreeRoot].some((root) => path === root || path.startsWith(`${root}/`)) ? path : null,
    scratchRoots: ['/home/sandbox', '/tmp'],
    ...overrides,
  };
}

const reasonOf = (result: ReturnType<typeof sanitizeEnvironment>, name: string) =>
  result.dropped.find((entry) => entry.name === name)?.reason;

describe('sanitizeEnvironment', () => {
  it('starts from nothing: base env, sandbox HOME/TMPDIR, default PATH', () => {
    const result = sanitizeEnvironment({}, context('/work/wt'));
    expect(result.env).toEqual({
      PATH: '/usr/bin:/bin',
      CI: '1',
      NO_COLOR: '1',
      LANG: 'C.UTF-8',
      HOME: '/home/sandbox',
      TMPDIR: '/tmp',
    });
    expect(result.dropped).toEqual([]);
  });

  it('strips loader, git, ssh, cloud and package-manager variables', () => {
    const planted = {
      LD_PRELOAD: '/tmp/evil.so',
      LD_LIBRARY_PATH: '/tmp',
      DYLD_INSERT_LIBRARIES: '/tmp/x.dylib',
      GIT_CONFIG_GLOBAL: '/tmp/gitconfig',
      GIT_SSH_COMMAND: 'sh',
      SSH_AUTH_SOCK: '/tmp/agent',
      AWS_ACCESS_KEY_ID: 'x',
      GCP_PROJECT: 'x',
      GOOGLE_APPLICATION_CREDENTIALS: '/x.json',
      AZURE_CLIENT_ID: 'x',
      NPM_TOKEN: 'x',
      npm_config__authToken: 'x',
      NODE_OPTIONS: '--require /tmp/x.js',
      BASH_ENV: '/tmp/x.sh',
      'BASH_FUNC_ls%%': '() { :; }',
    };
    const result = sanitizeEnvironment(planted, context('/work/wt'));
    for (const name of Object.keys(planted)) {
      expect(result.env[name]).toBeUndefined();
      expect(['Dangerous', 'BadName']).toContain(reasonOf(result, name));
    }
    for (const name of ['LD_PRELOAD', 'GIT_SSH_COMMAND', 'SSH_AUTH_SOCK', 'AWS_ACCESS_KEY_ID', 'NPM_TOKEN']) {
      expect(isDangerousEnvName(name)).toBe(true);
    }
  });

  it('the setup profile takes the npm settings its runner sets; every other npm setting stays dropped', () => {
    const setup = SANDBOX_PROFILES.setup;
    const settings = {
      npm_config_registry: 'https://registry.npmjs.org/',
      npm_config_cache: '/crustcore/npm-cache',
      npm_config_ignore_scripts: 'true',
      npm_config_prefer_offline: 'true',
    };
    const planted = {
      npm_config__authToken: 'x',
      npm_config_userconfig: '/tmp/npmrc',
      NPM_CONFIG_SCRIPT_SHELL: '/tmp/sh',
      npm_config_globalconfig: '/tmp/g',
    };
    const result = sanitizeEnvironment(
      { ...settings, ...planted },
      context('/work/wt', { policy: setup.envPolicy, baseEnv: setup.baseEnv }),
    );
    for (const [name, value] of Object.entries(settings)) expect(result.env[name]).toBe(value);
    for (const name of Object.keys(planted)) expect(reasonOf(result, name), name).toBe('Dangerous');
    // A secret-looking value is still refused under a name the runner sets.
    const secret = sanitizeEnvironment(
      { npm_config_registry: 'https://x:ghp_abcdefghijklmnopqrstuvwxyz0123456789@r.example/' },
      context('/work/wt', { policy: setup.envPolicy, baseEnv: setup.baseEnv }),
    );
    expect(reasonOf(secret, 'npm_config_registry')).toBe('SecretValue');
    // CONTROL: any other profile drops the same settings as dangerous.
    const verify = sanitizeEnvironment(settings, context('/work/wt'));
    for (const name of Object.keys(settings)) expect(reasonOf(verify, name), name).toBe('Dangerous');
  });

  it('drops secret-looking names and values, and never echoes a value', () => {
    const result = sanitizeEnvironment(
      { DB_PASSWORD: 'hunter2', VITEST_MODE: 'ghp_abcdefghijklmnopqrstuvwxyz0123456789', NODE_ENV: 'test' },
      context('/work/wt'),
    );
    expect(reasonOf(result, 'DB_PASSWORD')).toBe('SecretName');
    expect(reasonOf(result, 'VITEST_MODE')).toBe('SecretValue');
    expect(result.env.NODE_ENV).toBe('test');
    expect(JSON.stringify(result.dropped)).not.toContain('hunter2');
    expect(JSON.stringify(result.dropped)).not.toContain('ghp_');
  });

  it('keeps only allowlisted names and never lets the caller set HOME or TMPDIR', () => {
    const result = sanitizeEnvironment(
      { RANDOM_THING: 'x', HOME: '/root', TMPDIR: '/var/tmp', VITEST_POOL: 'forks' },
      context('/work/wt'),
    );
    expect(reasonOf(result, 'RANDOM_THING')).toBe('NotAllowlisted');
    expect(reasonOf(result, 'HOME')).toBe('Reserved');
    expect(reasonOf(result, 'TMPDIR')).toBe('Reserved');
    expect(result.env.HOME).toBe('/home/sandbox');
    expect(result.env.VITEST_POOL).toBe('forks');
  });

  it('validates PATH-like lists component by component', () => {
    const worktree = makeWorktree({ 'bin/git': '#!/bin/sh\n' });
    try {
      const check = (value: string) => {
        const result = sanitizeEnvironment({ PATH: value }, context(worktree.root));
        return { reason: reasonOf(result, 'PATH'), path: result.env.PATH, detail: result.dropped[0]?.detail };
      };
      expect(check('/usr/bin:/bin')).toEqual({ reason: undefined, path: '/usr/bin:/bin', detail: undefined });
      expect(check(`${worktree.root}/bin:/usr/bin`)).toMatchObject({ reason: 'BadPathList', path: '/usr/bin:/bin' });
      expect(check(`${worktree.root}/bin:/usr/bin`).detail).toContain('inside the worktree');
      expect(check('/usr/bin::/bin').detail).toContain('empty');
      expect(check('bin:/usr/bin').detail).toContain('normalized absolute');
      expect(check('/usr/bin/../../root').detail).toContain('normalized absolute');
      expect(check('/usr/no-such-dir-crustcore').detail).toContain('does not exist');
      expect(check('/root/.pyenv/shims').detail).toContain('not visible');
      const allowed = sanitizeEnvironment(
        { PATH: `${worktree.root}/bin:/usr/bin` },
        context(worktree.root, { allowWorktreeInPathLists: true }),
      );
      expect(allowed.env.PATH).toBe(`${worktree.root}/bin:/usr/bin`);
    } finally {
      worktree.remove();
    }
  });

  it('lets the worker pass a placeholder model key for the proxy, never a real-looking one', () => {
    const worker = SANDBOX_PROFILES.worker;
    const workerContext = context('/work/wt', { policy: worker.envPolicy, baseEnv: worker.baseEnv });
    const placeholder = sanitizeEnvironment(
      { ANTHROPIC_API_KEY: 'crustcore-proxy', ANTHROPIC_BASE_URL: 'http://localhost/x' },
      workerContext,
    );
    expect(placeholder.env.ANTHROPIC_API_KEY).toBe('crustcore-proxy');
    expect(placeholder.env.ANTHROPIC_BASE_URL).toBe('http://localhost/x');
    const real = sanitizeEnvironment(
      { ANTHROPIC_API_KEY: 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345' },
      workerContext,
    );
    expect(real.dropped).toEqual([expect.objectContaining({ name: 'ANTHROPIC_API_KEY', reason: 'SecretValue' })]);
    const verify = sanitizeEnvironment({ ANTHROPIC_API_KEY: 'crustcore-proxy' }, context('/work/wt'));
    expect(verify.dropped).toEqual([expect.objectContaining({ reason: 'SecretName' })]);
  });

  it('accepts cache directories on sandbox scratch space', () => {
    const result = sanitizeEnvironment({ GOCACHE: '/tmp/go-cache', GOPATH: '/etc' }, context('/work/wt'));
    expect(result.env.GOCACHE).toBe('/tmp/go-cache');
    expect(reasonOf(result, 'GOPATH')).toBe('BadPathList');
  });
});
