/**
 * Red team, class "detectors miss most credential formats" (issue Hardening
 * §6), through the real CLI: with nothing registered in a vault, the test
 * suite of the user's repository prints one credential of every format the
 * independent corpus knows, in the contexts it comes in (env files, JSON,
 * YAML, headers, URLs, logs, error messages). The baseline run, the verify
 * run and the worker's stderr all carry them. Nothing CrustCore records (the
 * ledger, its artifacts, the stored patch evidence) and nothing it prints may
 * hold one of them.
 *
 * Control: the same test command run directly prints every credential raw.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCli, crustcore, makeRepo } from '../golden/cli-harness.js';
import { FORMATS, generateCredentialCorpus } from '../packages/secrets/test/fixtures/credential-corpus.js';

beforeAll(() => buildCli(), 60_000);

/** One sample per format, in a context that varies with the format, so every context is used. */
function leakedSamples(): { readonly text: string; readonly secret: string; readonly kind: string }[] {
  const corpus = generateCredentialCorpus(7_331, 1, 0);
  const byKind = new Map<string, { text: string; secret: string; kind: string }[]>();
  for (const sample of corpus) {
    if (sample.secret === null) continue;
    const list = byKind.get(sample.kind) ?? [];
    list.push({ text: sample.text, secret: sample.secret, kind: sample.kind });
    byKind.set(sample.kind, list);
  }
  return [...byKind.values()].map((list, index) => list[index % list.length] as (typeof list)[number]);
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push(path);
  }
  return out;
}

const samples = leakedSamples();
const LEAK = samples.map((sample) => sample.text).join('\n');

const REPO = {
  'package.json': '{ "name": "leaky", "type": "module", "scripts": { "test": "node --test" } }\n',
  'src/math.js': 'export const add = (a, b) => a - b;\n',
  'fixtures/leak.txt': `${LEAK}\n`,
  // The test prints the fixture on stdout and stderr, as a debugging test does, then checks add().
  'test/math.test.js': [
    "import assert from 'node:assert/strict';",
    "import { readFileSync } from 'node:fs';",
    "import { test } from 'node:test';",
    "import { add } from '../src/math.js';",
    "const leak = readFileSync(new URL('../fixtures/leak.txt', import.meta.url), 'utf8');",
    "test('adds', () => { console.log(leak); console.error(leak); assert.equal(add(2, 3), 5); });",
    '',
  ].join('\n'),
  // The worker fixes the bug and dumps the same text on its stderr.
  'tools/fix.sh': "#!/bin/sh\nsed -i 's/a - b/a + b/' src/math.js\ncat fixtures/leak.txt >&2\n",
};

describe('red team: credentials a test or a worker prints never reach the record', () => {
  it('the corpus covers many formats (the attack is broad)', () => {
    expect(new Set(samples.map((sample) => sample.kind)).size).toBe(FORMATS.length);
    expect(samples.length).toBeGreaterThanOrEqual(40);
  });

  it('control: the test command run directly prints every credential', () => {
    const box = makeRepo(REPO);
    const direct = spawnSync(process.execPath, ['--test'], { cwd: box.repo, encoding: 'utf8' });
    const printed = direct.stdout + direct.stderr;
    for (const sample of samples) expect(printed, sample.kind).toContain(sample.secret);
  });

  it('a whole run (baseline, worker, verify): no credential in the ledger, its artifacts, the patch store or the output', () => {
    const box = makeRepo(REPO);
    const run = crustcore(box, [
      'run',
      '--goal',
      'fix add',
      '--worker',
      'sh tools/fix.sh',
      '--verify',
      'node --test',
      '--approve',
      'auto',
      '--json',
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    const recorded = ['projects', 'patches', 'journal'].flatMap((dir) => filesUnder(join(box.home, dir)));
    expect(recorded.length).toBeGreaterThan(3);
    const leaks: string[] = [];
    for (const file of recorded) {
      const text = readFileSync(file).toString('latin1');
      for (const sample of samples) if (text.includes(sample.secret)) leaks.push(`${sample.kind} in ${file}`);
    }
    for (const sample of samples)
      if ((run.stdout + run.stderr).includes(sample.secret)) leaks.push(`${sample.kind} in the CLI output`);
    expect(leaks).toEqual([]);
    // The record does hold the test output (redacted), so the check above looked at real text.
    const artifacts = recorded.map((file) => readFileSync(file).toString('latin1')).join('\n');
    expect(artifacts).toContain('[REDACTED');
  });
});
