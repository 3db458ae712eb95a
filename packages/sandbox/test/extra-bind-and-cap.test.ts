import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mintSandboxExecCap, runSandboxed, SANDBOX_HOME, SandboxExecCap } from '../src/index.js';
import { makeWorktree } from './worktree.js';

const scratch = mkdtempSync(join(tmpdir(), 'crustcore-binds-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('mintSandboxExecCap', () => {
  it('mints each named profile on bubblewrap by default', () => {
    for (const name of ['verify', 'build', 'worker', 'hostile'] as const) {
      const cap = mintSandboxExecCap(name);
      expect(cap._tag).toBe('Right');
      if (cap._tag === 'Right') {
        expect(cap.right.profileName).toBe(name);
        expect(cap.right.backend).toBe('bubblewrap');
        expect(SandboxExecCap.isCap(cap.right)).toBe(true);
      }
    }
  });

  it('refuses unknown profiles, the jail for hostile, and binds where the profile forbids them', () => {
    expect(mintSandboxExecCap('root' as never)).toMatchObject({ left: { reason: 'UnknownProfile' } });
    expect(mintSandboxExecCap('hostile', { backend: 'process-jail' })).toMatchObject({
      left: { reason: 'BackendNotAllowed' },
    });
    expect(mintSandboxExecCap('verify', { extraBinds: [{ source: scratch, mode: 'read-only' }] })).toMatchObject({
      left: { reason: 'ExtraBindsNotAllowed' },
    });
    expect(mintSandboxExecCap('verify', { limits: { processes: 0 } })).toMatchObject({ left: { reason: 'BadLimits' } });
  });

  it('only tightens limits', () => {
    const cap = mintSandboxExecCap('verify', { limits: { processes: 16, cpuSeconds: 10_000_000 } });
    if (cap._tag === 'Left') throw new Error(cap.left.message);
    expect(cap.right.limits.processes).toBe(16);
    expect(cap.right.limits.cpuSeconds).toBe(600);
  });

  it('checks worker extra binds: sockets and a throwaway HOME pass, credentials and system dirs do not', () => {
    const home = join(scratch, 'home');
    mkdirSync(home);
    const ok = mintSandboxExecCap('worker', {
      extraBinds: [
        { source: home, target: SANDBOX_HOME, mode: 'read-write' },
        { source: scratch, target: '/run/crustcore', mode: 'read-only' },
      ],
    });
    expect(ok._tag).toBe('Right');
    const bad = (source: string, target?: string) =>
      mintSandboxExecCap('worker', {
        extraBinds: [{ source, ...(target === undefined ? {} : { target }), mode: 'read-only' }],
      });
    expect(bad('/')).toMatchObject({ left: { reason: 'BadExtraBind' } });
    expect(bad('/root')).toMatchObject({ left: { reason: 'BadExtraBind' } });
    expect(bad('/etc')).toMatchObject({ left: { reason: 'BadExtraBind' } });
    expect(bad('relative/path')).toMatchObject({ left: { reason: 'BadExtraBind' } });
    expect(bad(`${scratch}/../x`)).toMatchObject({ left: { reason: 'BadExtraBind' } });
    expect(bad(scratch, '/usr/lib/x')).toMatchObject({ left: { reason: 'BadExtraBind' } });
    expect(bad(scratch, '/')).toMatchObject({ left: { reason: 'BadExtraBind' } });
    expect(bad(join(scratch, 'missing'))).toMatchObject({ left: { reason: 'BadExtraBind' } });
    // A symlink is judged by where it points.
    const link = join(scratch, 'innocent');
    symlinkSync('/root', link);
    expect(bad(link)).toMatchObject({ left: { reason: 'BadExtraBind' } });
  });

  it('cannot be forged by a plain object or constructed directly', async () => {
    const forged = { profileName: 'build', backend: 'bubblewrap', extraBinds: [], limits: {}, profile: {} };
    const worktree = makeWorktree();
    try {
      // @ts-expect-error a plain object is not a SandboxExecCap
      const result = await runSandboxed(forged, {
        argv: ['/bin/true'],
        worktreeRoot: worktree.root,
        cwd: worktree.root,
      });
      expect(result).toMatchObject({ _tag: 'Left', left: { reason: 'InvalidCapability' } });
      // @ts-expect-error a string is not a SandboxExecCap
      const fromString = await runSandboxed('build', {
        argv: ['/bin/true'],
        worktreeRoot: worktree.root,
        cwd: worktree.root,
      });
      expect(fromString).toMatchObject({ _tag: 'Left', left: { reason: 'InvalidCapability' } });
    } finally {
      worktree.remove();
    }
    // @ts-expect-error the constructor is private
    expect(() => new SandboxExecCap(Symbol('x'), {}, 'bubblewrap', [], {})).toThrow(TypeError);
    expect(SandboxExecCap.isCap(Object.create(SandboxExecCap.prototype))).toBe(false);
  });
});
