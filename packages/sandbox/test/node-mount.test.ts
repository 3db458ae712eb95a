/**
 * Which host path a sandbox gets for the Node binary outside the system roots (host-layout.ts,
 * nodeMountFor). The install prefix is bound so tests can run that Node — but a prefix that holds a
 * home would show every sandbox the user's `~/.ssh` and CrustCore's own state, so then only the
 * binary is bound. The CONTROL is the rule without the homes: it would bind the whole home.
 */
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeMountFor, resolvedHomes } from '../src/mount/host-layout.js';

describe('the Node binary a sandbox sees', () => {
  it('nothing under the system roots; the install prefix elsewhere', () => {
    expect(nodeMountFor('/usr/bin/node', ['/home/u'])).toBeNull();
    expect(nodeMountFor('/opt/node/bin/node', ['/home/u'])).toBe('/opt/node');
    expect(nodeMountFor('/home/u/.nvm/versions/node/v20.20.2/bin/node', ['/home/u'])).toBe(
      '/home/u/.nvm/versions/node/v20.20.2',
    );
  });

  it('a prefix that is or holds a home binds the binary alone', () => {
    expect(nodeMountFor('/home/u/bin/node', ['/home/u'])).toBe('/home/u/bin/node');
    expect(nodeMountFor('/home/u/node', ['/home/u'])).toBe('/home/u/node');
    expect(nodeMountFor('/home/bin/node', ['/home/u'])).toBe('/home/bin/node');
    expect(nodeMountFor('/srv/bin/node', ['/root', '/srv/crustcore'])).toBe('/srv/bin/node');
  });

  it('CONTROL: without the homes, the same binaries would bind the whole home', () => {
    expect(nodeMountFor('/home/u/bin/node', [])).toBe('/home/u');
    expect(nodeMountFor('/srv/bin/node', [])).toBe('/srv');
  });
});

describe('homes as the binary sees them', () => {
  it('a home reached through a symlink, or spelled with doubled slashes, still keeps its prefix out', () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'node-mount-')));
    mkdirSync(join(root, 'data', 'u', 'bin'), { recursive: true });
    symlinkSync(join(root, 'data', 'u'), join(root, 'home-u'));
    const binary = join(root, 'data', 'u', 'bin', 'node');
    expect(nodeMountFor(binary, resolvedHomes([join(root, 'home-u')]))).toBe(binary);
    expect(nodeMountFor(binary, resolvedHomes([`${root}//data//u/`]))).toBe(binary);
    expect(resolvedHomes(['', 'relative', undefined])).toEqual([]);
    // CONTROL: compared as spelled, the symlinked home would not be seen inside the prefix.
    expect(nodeMountFor(binary, [join(root, 'home-u')])).toBe(join(root, 'data', 'u'));
  });
});
