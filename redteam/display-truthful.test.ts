/**
 * Red team, class "the approver can be shown something other than what runs"
 * (issue Hardening §4), through the real CLI. A worker makes the real fix and
 * slips in content a terminal would show differently from how a program acts
 * on it. Under `--approve auto` each patch must need a person (risk
 * `hidden-content`, tree untouched), and `crustcore diff` must show the
 * hiding characters as escapes, never raw.
 *
 * Controls: the interpreter really acts on the hidden content (node runs code
 * after a U+2028 "comment", python3 decodes a UTF-7 file into code), and
 * `git diff` of the same change shows the raw characters, so each case is an
 * attack that works without CrustCore.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCli, crustcore, makeRepo, NODE_REPO } from '../golden/cli-harness.js';

beforeAll(() => buildCli(), 60_000);

const DENIED = 4;
const FIX = "sed -i 's/a - b/a + b/' src/math.js";

interface HostileCase {
  readonly name: string;
  /** File written by the worker (path relative to the repo) and its bytes, as a list of byte values. */
  readonly path: string;
  readonly bytes: readonly number[];
  /** Characters that must never reach the terminal raw. */
  readonly hidden: readonly string[];
}

const utf8 = (text: string): number[] => [...new TextEncoder().encode(text)];

const CASES: readonly HostileCase[] = [
  {
    name: 'Trojan Source bidi controls in a comment',
    path: 'src/access.js',
    bytes: utf8(
      'export const isAdmin = (u) => {\n  /*\u202E } \u2066if (u.admin)\u2069 \u2066 begin admins only */\n  return true;\n};\n',
    ),
    hidden: ['\u202E', '\u2066', '\u2069'],
  },
  {
    name: 'code after a U+2028 inside a // comment',
    path: 'src/note.js',
    bytes: utf8('// a harmless note\u2028globalThis.PWNED = 1;\nexport const note = 1;\n'),
    hidden: ['\u2028'],
  },
  {
    name: 'a terminal escape that clears the screen',
    path: 'src/banner.js',
    bytes: utf8('export const banner = "\u001b[2J\u001b[H all clear";\n'),
    hidden: ['\u001b'],
  },
  {
    name: 'a zero-width character and a Cyrillic look-alike in identifiers',
    path: 'src/auth.js',
    bytes: utf8('export const p\u0430ssword = "x";\nexport const to\u200Bken = "y";\n'),
    hidden: ['\u0430', '\u200B'],
  },
  {
    name: 'Shift-JIS bytes whose trail byte is a backslash',
    path: 'lib/strings.py',
    bytes: [...utf8('MESSAGE = "'), 0x83, 0x5c, ...utf8('"\n')],
    hidden: ['\uFFFD'],
  },
  {
    name: 'a file name with a right-to-left override',
    path: 'docs/\u202Etxt.js',
    bytes: utf8('module.exports = 1;\n'),
    hidden: ['\u202E'],
  },
];

/** The worker script, committed in the fixture; the bytes travel as hex so no shell layer can change them. */
function hostileWorker(target: HostileCase): string {
  const hex = Buffer.from(target.bytes).toString('hex');
  const write = `require("fs").writeFileSync(process.argv[1], Buffer.from(process.argv[2], "hex"))`;
  return `#!/bin/sh\nset -e\n${FIX}\nmkdir -p "$(dirname '${target.path}')"\nnode -e '${write}' '${target.path}' '${hex}'\n`;
}

describe('red team: what a person is shown is what will be written', () => {
  it.each(CASES)('$name: needs a person under --approve auto; crustcore diff shows escapes, never raw', (target) => {
    const box = makeRepo({ ...NODE_REPO, 'tools/hostile.sh': hostileWorker(target) });
    const run = crustcore(box, [
      'run',
      '--goal',
      'fix add',
      '--worker',
      'sh tools/hostile.sh',
      '--approve',
      'auto',
      '--json',
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(DENIED);
    expect(JSON.stringify(run.json)).toContain('hidden-content');
    // Nothing was applied: the user's tree still has the bug and no planted file.
    expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toContain('a - b');
    const taskId = String(run.json?.taskId);
    const diff = crustcore(box, ['diff', taskId]);
    expect(diff.status, diff.stderr).toBe(0);
    for (const ch of target.hidden) expect(diff.stdout).not.toContain(ch);
    expect(diff.stdout).toMatch(/\\(u|x)\{[0-9A-F]+\}/);
    expect(diff.stdout).toContain('warning:');
    // Everything the CLI wrote is free of raw hiding characters, the JSON line included.
    for (const ch of target.hidden.filter((c) => c !== '\uFFFD')) expect(run.stdout + run.stderr).not.toContain(ch);
  });

  it('control: git shows the raw characters of the same change (the view is what protects)', () => {
    const box = makeRepo(NODE_REPO);
    for (const target of CASES.slice(0, 4)) {
      writeFileSync(join(box.repo, target.path), Buffer.from(target.bytes));
      execFileSync('git', ['add', '-N', target.path], { cwd: box.repo });
    }
    const raw = execFileSync('git', ['-c', 'core.quotePath=false', 'diff', '--no-color'], {
      cwd: box.repo,
      encoding: 'utf8',
    });
    for (const target of CASES.slice(0, 4)) for (const ch of target.hidden) expect(raw).toContain(ch);
  });

  it('control: node runs code placed after a U+2028 in a // comment', () => {
    const dir = mkdtempSync(join(tmpdir(), 'crustcore-u2028-'));
    const file = join(dir, 'note.mjs');
    writeFileSync(file, Buffer.from(CASES[1]?.bytes ?? []));
    const out = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', `await import(${JSON.stringify(file)}); console.log(globalThis.PWNED)`],
      {
        encoding: 'utf8',
      },
    );
    expect(out.stdout.trim()).toBe('1');
  });

  it('a UTF-7 Python file: python3 runs a hidden line; the view flags the declared encoding', () => {
    const dir = mkdtempSync(join(tmpdir(), 'crustcore-utf7-'));
    const file = join(dir, 'm.py');
    writeFileSync(file, '# -*- coding: utf-7 -*-\n# harmless +AAo-print("pwned")\n');
    const control = spawnSync('python3', [file], { encoding: 'utf8' });
    expect(control.stdout.trim()).toBe('pwned');

    const box = makeRepo(NODE_REPO);
    const run = crustcore(box, [
      'run',
      '--goal',
      'fix add',
      '--worker',
      `sh -c "${FIX} && printf '# -*- coding: utf-7 -*-\\n# harmless +AAo-print(1)\\n' > m.py"`,
      '--approve',
      'auto',
      '--json',
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(DENIED);
    const diff = crustcore(box, ['diff', String(run.json?.taskId)]);
    expect(diff.stdout).toMatch(/declared non-UTF-8 encoding/);
  });
});
