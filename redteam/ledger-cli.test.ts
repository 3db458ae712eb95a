/**
 * `crustcore inspect` and `crustcore export` as a user runs them: on the
 * golden task story, on tampered and crash-torn copies, with good and bad
 * key files. Exit codes and the first bad seq/reason are the contract.
 */
import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { INTEGRITY_REASONS, type IntegrityReason, stateDirLayout } from '@crustcore/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode, INSPECT_EXIT } from '../packages/crustcore/src/cli/exit-codes.js';
import { type Io, makeStyle } from '../packages/crustcore/src/cli/output.js';
import { exportCommand } from '../packages/crustcore/src/commands/export.js';
import { inspectCommand } from '../packages/crustcore/src/commands/inspect.js';
import { framesOf, readLog, tempDir } from '../packages/ledger/test/helpers.js';
import { GOLDEN_KEY_HEX, goldenKey, writeGoldenStory } from '../xtask/golden-ledger.js';

const scratch = tempDir('ledger-cli-');
const story = join(scratch.path, 'story');
let counter = 0;

beforeAll(async () => {
  await writeGoldenStory(story, goldenKey());
  cpSync(story, join(scratch.path, 'pristine'), { recursive: true });
  // The installation key lives in $CRUSTCORE_HOME, never next to the log.
  writeFileSync(join(scratch.path, 'home-receipt.key'), `${GOLDEN_KEY_HEX}\n`, { mode: 0o600 });
}, 60_000);
afterAll(() => scratch.remove());

function homeWithKey(): string {
  const dir = join(scratch.path, `home-${++counter}`);
  cpSync(join(scratch.path, 'home-receipt.key'), join(dir, 'receipt.key'));
  chmodSync(join(dir, 'receipt.key'), 0o600);
  return dir;
}

function copyOfStory(): string {
  const dir = join(scratch.path, `case-${++counter}`);
  cpSync(join(scratch.path, 'pristine'), dir, { recursive: true });
  return dir;
}

async function run(
  command: typeof inspectCommand,
  args: string[],
  env: NodeJS.ProcessEnv = { CRUSTCORE_HOME: homeWithKey() },
): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const chunks = { out: [] as Buffer[], err: [] as Buffer[] };
  stdout.on('data', (c: Buffer) => chunks.out.push(c));
  stderr.on('data', (c: Buffer) => chunks.err.push(c));
  const io: Io = {
    stdout,
    stderr,
    stdin: new PassThrough(),
    env,
    cwd: scratch.path,
    out: makeStyle(stdout, env),
    err: makeStyle(stderr, env),
  };
  const code = await command.run(args, io);
  return { code, stdout: Buffer.concat(chunks.out).toString(), stderr: Buffer.concat(chunks.err).toString() };
}

describe('crustcore inspect', () => {
  it('exits 0 on an intact log and tells the story', async () => {
    const result = await run(inspectCommand, ['--dir', story, '--replay']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(ExitCode.ok);
    expect(result.stdout).toContain('task t_golden1: completed');
    expect(result.stdout).toContain('goal: "Make parseDuration accept');
    expect(result.stdout).toContain('verify evidence: npm test → exit 0');
    expect(result.stdout).toContain('approvals: a_exec1 granted by human, a_integrate1 granted by human');
    expect(result.stdout).toMatch(/replay: 15 events → \d+ actions reproduced/);
    expect(result.stdout).toContain('MAC checked');
    expect(result.stdout.trim().endsWith('intact')).toBe(true);
  });

  it('--json gives one document; --task filters the stories; --log works like --dir', async () => {
    const json = await run(inspectCommand, ['--log', stateDirLayout(story).logPath, '--json', '--task', 't_nobody']);
    expect(json.code).toBe(ExitCode.ok);
    const report = JSON.parse(json.stdout);
    expect(report).toMatchObject({ ok: true, failure: null, tasks: [] });
    expect(report.chain.frames).toBe(framesOf(readLog(story)).length);
  });

  it("names the first bad seq and the reason, with that reason's exit code", async () => {
    const dir = copyOfStory();
    const bytes = readLog(dir);
    const victim = framesOf(bytes)[11]!;
    bytes[victim.offset + victim.headerLength + 3]! ^= 0x20;
    writeFileSync(stateDirLayout(dir).logPath, bytes);
    const result = await run(inspectCommand, ['--dir', dir]);
    expect(result.code).toBe(INSPECT_EXIT['bad-hash']);
    expect(result.stderr).toContain(`integrity check failed at seq ${victim.seq}: bad-hash`);
    const json = JSON.parse((await run(inspectCommand, ['--dir', dir, '--json'])).stdout);
    expect(json.failure).toMatchObject({ reason: 'bad-hash', seq: victim.seq });
  });

  it('a cut log is "truncated"', async () => {
    const dir = copyOfStory();
    truncateSync(stateDirLayout(dir).logPath, readLog(dir).length - 7);
    const result = await run(inspectCommand, ['--dir', dir]);
    expect(result.code).toBe(INSPECT_EXIT.truncated);
    expect(result.stderr).toMatch(/at seq \d+: truncated/);
  });

  it('a torn tail past the head is reported and is not a failure', async () => {
    const dir = copyOfStory();
    writeFileSync(stateDirLayout(dir).logPath, Buffer.from([0x99, 0x01, 0x00, 0x00, 0x43, 0x43]), { flag: 'a' });
    const result = await run(inspectCommand, ['--dir', dir]);
    expect(result.code).toBe(ExitCode.ok);
    expect(result.stdout).toContain('torn tail: 6 bytes after seq');
  });

  it('without the installation key a log with receipts cannot pass', async () => {
    const result = await run(inspectCommand, ['--dir', story], { CRUSTCORE_HOME: join(scratch.path, 'empty-home') });
    expect(result.code).toBe(INSPECT_EXIT['bad-receipt']);
    expect(result.stderr).toMatch(/bad-receipt — no receipt key/);
  });

  it('every reason has its own exit code, apart from every other code the CLI uses', () => {
    const codes = INTEGRITY_REASONS.map((reason) => INSPECT_EXIT[reason]);
    expect(new Set(codes).size).toBe(INTEGRITY_REASONS.length);
    for (const code of codes) {
      expect(Object.values(ExitCode)).not.toContain(code);
      expect(code).toBeGreaterThan(0);
      expect(code).toBeLessThan(126); // above 125 the shell reserves the codes
    }
  });

  it('damage of each kind exits with the code of the reason it names', async () => {
    const frameAt = (dir: string, index: number) => framesOf(readLog(dir))[index]!;
    // Artifacts sit in two-hex-digit shard directories.
    const firstArtifact = (dir: string): string => {
      const artifacts = stateDirLayout(dir).artifactsDir;
      const shard = readdirSync(artifacts).find((name) => /^[0-9a-f]{2}$/.test(name))!;
      return join(artifacts, shard, readdirSync(join(artifacts, shard))[0]!);
    };
    const damage: Array<readonly [IntegrityReason, (dir: string) => void]> = [
      [
        'missing-frame',
        (dir) => {
          const bytes = readLog(dir);
          const victim = frameAt(dir, 5);
          const cut = Buffer.concat([bytes.subarray(0, victim.offset), bytes.subarray(victim.offset + victim.length)]);
          writeFileSync(stateDirLayout(dir).logPath, cut);
        },
      ],
      [
        'reordered',
        (dir) => {
          const bytes = readLog(dir);
          const victim = frameAt(dir, 5);
          const end = victim.offset + victim.length;
          const doubled = Buffer.concat([
            bytes.subarray(0, end),
            bytes.subarray(victim.offset, end),
            bytes.subarray(end),
          ]);
          writeFileSync(stateDirLayout(dir).logPath, doubled);
        },
      ],
      ['head-mismatch', (dir) => writeFileSync(stateDirLayout(dir).headPath, 'not a head file\n')],
      ['missing-artifact', (dir) => rmSync(firstArtifact(dir))],
      ['bad-artifact', (dir) => writeFileSync(firstArtifact(dir), 'replaced\n')],
    ];
    const seen = new Set<number>();
    for (const [reason, harm] of damage) {
      const dir = copyOfStory();
      harm(dir);
      const result = await run(inspectCommand, ['--dir', dir]);
      expect(result.stderr, reason).toContain(`: ${reason} — `);
      expect(result.code, reason).toBe(INSPECT_EXIT[reason]);
      seen.add(result.code);
    }
    expect(seen.size).toBe(damage.length);
  });

  it('refuses a key file others can read', async () => {
    const loose = join(scratch.path, 'loose.key');
    writeFileSync(loose, `${GOLDEN_KEY_HEX}\n`);
    chmodSync(loose, 0o644);
    const result = await run(inspectCommand, ['--dir', story, '--key', loose]);
    expect(result.code).toBe(ExitCode.usage);
    expect(result.stderr).toContain('chmod 600');
  });

  it('usage errors: both --dir and --log, unknown flags, no log', async () => {
    await expect(run(inspectCommand, ['--dir', story, '--log', 'x.log'])).rejects.toThrow(/not both/);
    await expect(run(inspectCommand, ['--frobnicate'])).rejects.toThrow();
    expect((await run(inspectCommand, ['--dir', join(scratch.path, 'nothing-here')])).code).toBe(ExitCode.usage);
  });
});

describe('crustcore export', () => {
  it('writes one canonical JSON line per frame with hex hashes', async () => {
    const result = await run(exportCommand, ['--dir', story, '--format', 'jsonl']);
    expect(result.code).toBe(ExitCode.ok);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(framesOf(readLog(story)).length);
    expect(lines[1]).toMatchObject({
      seq: 2,
      kind: 'TaskCreated',
      payload: { goal: expect.stringContaining('parseDuration') },
    });
    for (const line of lines) expect(line.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('--redacted drops internal and secret-adjacent payloads, keeps model-visible and user ones', async () => {
    const result = await run(exportCommand, ['--dir', story, '--format', 'jsonl', '--redacted']);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(result.stdout).not.toContain('s_npmtoken');
    for (const line of lines) {
      const dropped = line.visibility === 'internal' || line.redaction !== 'none';
      expect('payload' in line).toBe(!dropped);
      expect(line.payloadHash).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(lines.some((l) => l.visibility === 'model-visible' && 'payload' in l)).toBe(true);
  });

  it('a log path that is a directory is a usage error, not a crash', async () => {
    const dir = join(scratch.path, `dir-log-${++counter}`);
    mkdirSync(join(dir, 'events.log'), { recursive: true });
    const exported = await run(exportCommand, ['--dir', dir, '--format', 'jsonl']);
    expect(exported.code).toBe(ExitCode.usage);
    expect(exported.stderr).toContain('no log at');
    expect((await run(inspectCommand, ['--dir', dir])).code).toBe(ExitCode.usage);
  });

  it('requires --format jsonl and stops with "integrity" at a damaged frame', async () => {
    await expect(run(exportCommand, ['--dir', story])).rejects.toThrow(/--format jsonl/);
    const dir = copyOfStory();
    const bytes = readLog(dir);
    bytes[300]! ^= 1;
    writeFileSync(stateDirLayout(dir).logPath, bytes);
    const result = await run(exportCommand, ['--dir', dir, '--format', 'jsonl']);
    expect(result.code).toBe(ExitCode.integrity);
    expect(readFileSync(stateDirLayout(dir).logPath).length).toBe(bytes.length);
  });
});
