/**
 * Attacks on the filesystem view: read the host's SSH key and HOME, write
 * outside the worktree. Each attack runs for real under bubblewrap; the
 * suite fails (never skips) when bubblewrap is missing.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { mintSandboxExecCap, runSandboxed, type SandboxedResult, type SandboxProfileName } from '@crustcore/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const worktree = mkdtempSync(join(tmpdir(), 'crustcore-redteam-fs-'));
const sshDirectory = '/root/.ssh';
const keyPath = join(sshDirectory, `id_test_crustcore_${process.pid}`);
const keyText = `-----BEGIN OPENSSH PRIVATE KEY-----\ncrustcore-redteam-${process.pid}\n-----END OPENSSH PRIVATE KEY-----\n`;
let createdSshDirectory = false;
const hostHomeMarker = join(homedir(), `.crustcore-redteam-home-${process.pid}`);

async function attack(script: string, profile: SandboxProfileName = 'build'): Promise<SandboxedResult> {
  const cap = mintSandboxExecCap(profile);
  if (cap._tag === 'Left') throw new Error(cap.left.message);
  const result = await runSandboxed(cap.right, {
    argv: ['sh', '-c', script],
    worktreeRoot: worktree,
    cwd: worktree,
    timeoutMs: 20_000,
  });
  if (result._tag === 'Left') throw new Error(`refused: ${result.left.reason}: ${result.left.message}`);
  expect(result.right.backend).toBe('bubblewrap');
  return result.right;
}

beforeAll(() => {
  if (!existsSync(sshDirectory)) {
    mkdirSync(sshDirectory, { mode: 0o700 });
    createdSshDirectory = true;
  }
  writeFileSync(keyPath, keyText, { mode: 0o600 });
  writeFileSync(hostHomeMarker, 'host home secret');
});

afterAll(() => {
  rmSync(keyPath, { force: true });
  if (createdSshDirectory) rmSync(sshDirectory, { recursive: true, force: true });
  rmSync(hostHomeMarker, { force: true });
  rmSync(worktree, { recursive: true, force: true });
});

describe('redteam: sandbox filesystem', () => {
  it('bubblewrap is installed (the suite fails without it)', async () => {
    const result = await attack('echo ready');
    expect(result.stdout.text).toBe('ready\n');
  });

  it('cannot read a real ~/.ssh key of the host', async () => {
    expect(readFileSync(keyPath, 'utf8')).toBe(keyText); // the key is really there on the host
    const result = await attack(`cat ${keyPath} 2>&1; ls -la ${sshDirectory} 2>&1; cat /root/.ssh/* 2>&1; echo done`);
    expect(result.stdout.text).not.toContain('crustcore-redteam');
    expect(result.stdout.text).toContain('No such file or directory');
    expect(result.stdout.text.trim().endsWith('done')).toBe(true);
  });

  it('cannot see the host HOME, and has its own', async () => {
    const result = await attack(
      `echo "HOME=$HOME"; cat ${hostHomeMarker} 2>&1; ls -a ${homedir()} 2>&1; ls -a "$HOME"`,
    );
    expect(result.stdout.text).not.toContain('host home secret');
    expect(result.stdout.text).toContain('HOME=/home/sandbox');
    expect(result.stdout.text).toContain(`ls: cannot access '${homedir()}': No such file or directory`);
    // The sandbox HOME starts empty.
    expect(result.stdout.text.endsWith('.\n..\n')).toBe(true);
  });

  it("cannot find secrets under /etc or other users' homes", async () => {
    const result = await attack(
      'ls /etc; cat /etc/shadow 2>&1; ls /home; ls /etc/ssl/private 2>&1; ls /var /opt /srv /work 2>&1',
    );
    expect(result.stdout.text).not.toMatch(/^root:/m);
    expect(result.stdout.text).not.toMatch(/^(shadow|gshadow|sudoers|npmrc|gitconfig|pip\.conf)$/m);
    expect(result.stdout.text).toMatch(/cannot access '\/var'/);
    expect(result.stdout.text).toMatch(/cannot access '\/work'/);
  });

  it('cannot write outside the worktree; host files stay untouched', async () => {
    const probe = `crustcore-redteam-${process.pid}`;
    const targets = [`/usr/${probe}`, `/etc/${probe}`, `/${probe}`, `${homedir()}/${probe}`, `/usr/bin/${probe}`];
    const script = [
      ...targets.map(
        (target) => `(echo x > ${target}) 2>/dev/null && echo "wrote ${target}" || echo "refused ${target}"`,
      ),
      `echo x > ${worktree}/inside && echo "wrote inside"`,
      'rm -f /usr/bin/env 2>/dev/null && echo "deleted env" || echo "kept env"',
    ].join('; ');
    const result = await attack(script);
    for (const target of targets) {
      expect(result.stdout.text).toContain(`refused ${target}`);
      expect(existsSync(target)).toBe(false);
    }
    expect(result.stdout.text).toContain('wrote inside');
    expect(result.stdout.text).toContain('kept env');
    expect(existsSync('/usr/bin/env')).toBe(true);
    expect(readFileSync(join(worktree, 'inside'), 'utf8')).toBe('x\n');
  });

  it('hostile code cannot escape through a symlink planted in the worktree', async () => {
    const result = await attack(
      `ln -s /root/.ssh ssh-link && cat ssh-link/$(basename ${keyPath}) 2>&1; echo end`,
      'hostile',
    );
    expect(result.stdout.text).not.toContain('crustcore-redteam');
  });
});
