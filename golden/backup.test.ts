/**
 * `crustcore backup` / `restore` as a user runs them (issue #17 item 7): real
 * runs through the built CLI fill a home; it is backed up, restored into a
 * fresh home, and `inspect --replay`, `export` and `diff` answer the same
 * from both (the daemon's side is backup-daemon.test.ts). Also: `completion` and `daemon install-unit` through the built bin, the unit
 * checked by `systemd-analyze verify` (with a control that it does catch a bad unit).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, crustcore, makeRepo, NODE_REPO, type Sandbox } from './cli-harness.js';
import { baseEnv, cli } from './daemon-harness.js';

beforeAll(() => buildCli(), 60_000);

const FIX_ADD = "sed -i 's/a - b/a + b/' src/math.js";
const cleanup: string[] = [];
afterAll(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

/** The same command against another home; the home's path itself is the only thing allowed to differ. */
function at(box: Sandbox, home: string, args: readonly string[]): string {
  const run = crustcore({ ...box, home }, args);
  expect(run.status, `${args.join(' ')}: ${run.stderr}`).toBe(0);
  return run.stdout.replaceAll(home, '<HOME>');
}

describe('backup → restore loses nothing', () => {
  it('two real runs: inspect --replay, export and diff answer the same from the restored home', () => {
    const box = makeRepo(NODE_REPO);
    cleanup.push(box.root);
    const fixed = crustcore(box, [
      'run',
      '--goal',
      'fix add',
      '--worker',
      `sh -c "${FIX_ADD}"`,
      '--approve',
      'auto',
      '--json',
    ]);
    expect(fixed.status, fixed.stderr).toBe(0);
    const denied = crustcore(box, [
      'run',
      '--goal',
      'touch',
      '--worker',
      `sh -c "${FIX_ADD} && echo more >> README.md"`,
      '--approve',
      'deny',
      '--json',
    ]);
    expect(denied.status, denied.stderr).toBe(4);
    const project = String(fixed.json?.stateDir).replace(box.home, '');
    expect(project).toMatch(/^\/projects\//);

    const archive = join(box.root, 'home.ccb');
    const backup = crustcore(box, ['backup', '--out', archive, '--json']);
    expect(backup.status, backup.stderr).toBe(0);
    expect(backup.json).toMatchObject({ ok: true, out: archive });
    const fresh = join(box.root, 'restored-home');
    const restore = crustcore(box, ['restore', archive, '--home', fresh, '--json']);
    expect(restore.status, restore.stderr).toBe(0);

    for (const args of [
      ['inspect', '--dir', `HOME${project}`, '--replay', '--json'],
      ['export', '--dir', `HOME${project}`, '--format', 'jsonl'],
      ['diff', String(fixed.json?.taskId), '--json'],
    ]) {
      const withHome = (home: string) => args.map((a) => a.replace('HOME', home));
      const before = at(box, box.home, withHome(box.home));
      expect(before.length, args.join(' ')).toBeGreaterThan(20);
      expect(at(box, fresh, withHome(fresh)), args.join(' ')).toBe(before);
    }
    // CONTROL: the comparison can fail — a home with one byte of its ledger changed does not inspect the same.
    const log = join(fresh, project, 'events.log');
    const bytes = readFileSync(log);
    bytes[bytes.length - 3] = (bytes[bytes.length - 3] ?? 0) ^ 0xff;
    writeFileSync(log, bytes);
    expect(crustcore({ ...box, home: fresh }, ['inspect', '--dir', `${fresh}${project}`, '--replay']).status).not.toBe(
      0,
    );

    // The home is not empty now: restore refuses without --force (exit 2) and writes nothing.
    const again = crustcore(box, ['restore', archive, '--home', fresh]);
    expect(again.status).toBe(2);
    expect(again.stderr).toContain('--force');
  }, 180_000);
});

describe('completion and the systemd unit through the bin', () => {
  it('crustcore completion bash loads in bash and completes; a missing shell is a usage error', () => {
    const box = makeRepo({ 'a.txt': 'a\n' });
    cleanup.push(box.root);
    const script = crustcore(box, ['completion', 'bash']);
    expect(script.status, script.stderr).toBe(0);
    writeFileSync(join(box.root, 'c.bash'), script.stdout);
    const out = execFileSync(
      'bash',
      [
        '--norc',
        '-c',
        `source ${join(box.root, 'c.bash')}; COMP_WORDS=(crustcore back); COMP_CWORD=1; _crustcore; echo "\${COMPREPLY[@]}"`,
      ],
      { encoding: 'utf8' },
    );
    expect(out.trim()).toBe('backup');
    expect(crustcore(box, ['completion', 'tcsh']).status).toBe(2);
  });

  it('daemon install-unit writes a unit systemd-analyze accepts; a broken copy is rejected (control)', () => {
    const box = makeRepo({ 'a.txt': 'a\n' });
    cleanup.push(box.root);
    const config = join(box.root, 'config with space');
    const env = { ...baseEnv(box.home), HOME: box.root, XDG_CONFIG_HOME: config };
    const wrote = cli(env, ['daemon', 'install-unit', '--state-dir', join(box.root, 'state%dir')]);
    expect(wrote.status, wrote.stderr).toBe(0);
    const unitFile = join(config, 'systemd', 'user', 'crustcore.service');
    const unit = readFileSync(unitFile, 'utf8');
    const field = (name: string) =>
      unit
        .split('\n')
        .find((l) => l.startsWith(`${name}=`))
        ?.slice(name.length + 1);
    expect(field('ExecStart')).toBe(
      `"${process.execPath}" "${join(import.meta.dirname, '..', 'packages/crustcore/dist/crustcore.cjs')}" "daemon" "--state-dir" "${join(box.root, 'state%%dir')}"`,
    );
    expect(field('Environment')).toBe(`"CRUSTCORE_HOME=${box.home}"`);
    expect(field('Restart')).toBe('on-failure');
    expect(field('WantedBy')).toBe('default.target');
    const verify = spawnSync('systemd-analyze', ['verify', unitFile], { encoding: 'utf8' });
    expect(verify.status, verify.stderr).toBe(0);
    const broken = join(box.root, 'broken.service');
    writeFileSync(broken, unit.replace(/^ExecStart="[^"]*"/m, `ExecStart="${join(box.root, 'no-such-node')}"`));
    expect(spawnSync('systemd-analyze', ['verify', broken], { encoding: 'utf8' }).status).not.toBe(0);
    const printed = cli(env, ['daemon', 'install-unit', '--print', '--state-dir', join(box.root, 'state%dir')]);
    expect(printed.stdout).toBe(unit);
  });
});
