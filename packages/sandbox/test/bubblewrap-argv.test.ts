import { describe, expect, it } from 'vitest';
import { bubblewrapArgv, ETC_ENTRIES, SANDBOX_HOME } from '../src/index.js';

const plan = {
  bwrapPath: '/usr/bin/bwrap',
  worktreeRoot: '/tmp/wt',
  cwd: '/tmp/wt/pkg',
  network: 'none' as const,
  extraBinds: [
    { source: '/srv/sock-dir', target: '/tmp/proxy', mode: 'read-only' as const },
    { source: '/srv/home', target: SANDBOX_HOME, mode: 'read-write' as const },
  ],
  command: ['npm', 'test'],
};

function pairs(args: readonly string[], flag: string): string[][] {
  const found: string[][] = [];
  args.forEach((arg, index) => {
    if (arg === flag) found.push(args.slice(index + 1, index + 3) as string[]);
  });
  return found;
}

describe('bubblewrapArgv', () => {
  const args = bubblewrapArgv(plan);
  const options = args.slice(0, args.indexOf('--'));

  it('isolates namespaces, kills with the parent, starts a new session, drops capabilities', () => {
    for (const flag of ['--unshare-all', '--die-with-parent', '--new-session']) expect(options).toContain(flag);
    expect(options[options.indexOf('--cap-drop') + 1]).toBe('ALL');
    expect(options).not.toContain('--share-net');
    expect(bubblewrapArgv({ ...plan, network: 'host' })).toContain('--share-net');
  });

  it('never binds the host root and binds only listed /etc entries', () => {
    const binds = [...pairs(options, '--ro-bind'), ...pairs(options, '--bind'), ...pairs(options, '--ro-bind-try')];
    expect(binds.some(([source]) => source === '/')).toBe(false);
    expect(binds.some(([source]) => source === '/etc' || source === '/root' || source === '/home')).toBe(false);
    const etc = binds.filter(([source]) => source?.startsWith('/etc')).map(([source]) => source);
    for (const entry of etc) expect(ETC_ENTRIES).toContain(entry);
    expect(etc).not.toContain('/etc/shadow');
  });

  it('mounts tmpfs /tmp before any bind below /tmp, and remounts / read-only last', () => {
    const tmpfsAt = options.findIndex((arg, index) => arg === '--tmpfs' && options[index + 1] === '/tmp');
    const worktreeAt = options.findIndex((arg, index) => arg === '--bind' && options[index + 1] === '/tmp/wt');
    const proxyAt = options.findIndex((arg, index) => arg === '--ro-bind' && options[index + 2] === '/tmp/proxy');
    expect(tmpfsAt).toBeGreaterThan(-1);
    expect(worktreeAt).toBeGreaterThan(tmpfsAt);
    expect(proxyAt).toBeGreaterThan(tmpfsAt);
    expect(options.indexOf('--remount-ro')).toBeGreaterThan(Math.max(worktreeAt, proxyAt));
    expect(options.slice(-2)).toEqual(['--chdir', '/tmp/wt/pkg']);
    expect(args.slice(args.indexOf('--') + 1)).toEqual(['npm', 'test']);
  });

  it('uses the bound HOME instead of a tmpfs when an extra bind targets it', () => {
    expect(pairs(options, '--tmpfs').map(([path]) => path)).not.toContain(SANDBOX_HOME);
    expect(pairs(options, '--bind')).toContainEqual(['/srv/home', SANDBOX_HOME]);
    const plain = bubblewrapArgv({ ...plan, extraBinds: [] });
    expect(pairs(plain, '--tmpfs').map(([path]) => path)).toContain(SANDBOX_HOME);
  });
});
