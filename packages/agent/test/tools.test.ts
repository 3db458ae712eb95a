import { readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentWorkspace } from '../src/index.js';
import { TOOL_NAMES, type ToolName } from '../src/tools/definitions.js';
import { planToolCall } from '../src/tools/tool-registry.js';
import { openWorkspace, tempTree } from './helpers.js';

const ALL = new Set<ToolName>(TOOL_NAMES);

async function run(workspace: AgentWorkspace, name: string, args: unknown) {
  const planned = planToolCall(workspace, name, args, ALL);
  if (planned.kind !== 'plan') throw new Error(planned.kind === 'invalid' ? planned.message : 'loop call');
  const execution = await planned.plan.execute(new AbortController().signal);
  return { ...execution, operation: planned.plan.operation };
}

const SOURCE = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

describe('file tools', () => {
  it('read_file numbers lines, honours a range and wraps content as data', async () => {
    const ws = openWorkspace(tempTree({ 'a.txt': SOURCE }));
    const read = await run(ws, 'read_file', { path: './a.txt', startLine: 3, endLine: 4 });
    expect(read.ok).toBe(true);
    expect(read.operation).toEqual({ op: 'fs.read', path: 'a.txt' });
    expect(read.text).toBe(
      'a.txt lines 3-4 of 30\n<untrusted-data source="file a.txt">\n3\tline 3\n4\tline 4\n</untrusted-data>',
    );
  });

  it('secrets in file content are scrubbed before the model sees them', async () => {
    const ws = openWorkspace(tempTree({ '.env': 'TOKEN=abc\n' }), (text) => text.replace('abc', '[redacted]'));
    expect((await run(ws, 'read_file', { path: '.env' })).text).toContain('TOKEN=[redacted]');
  });

  it('edit_file finds text that drifted up to 10 lines and says so', async () => {
    const root = tempTree({ 'a.txt': SOURCE });
    const ws = openWorkspace(root);
    const edited = await run(ws, 'edit_file', {
      path: 'a.txt',
      oldText: 'line 20',
      newText: 'LINE TWENTY',
      startLine: 12,
    });
    expect(edited).toMatchObject({ ok: true, text: 'edited a.txt at line 20 (the text had moved 8 line(s) down)' });
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toContain('LINE TWENTY\n');
  });

  it('edit_file mismatch: a diagnosis with the closest line, no write', async () => {
    const root = tempTree({ 'a.txt': SOURCE });
    const ws = openWorkspace(root);
    const edited = await run(ws, 'edit_file', { path: 'a.txt', oldText: 'lin 5', newText: 'x', startLine: 5 });
    expect(edited.ok).toBe(false);
    expect(edited.text).toMatch(/^edit failed: oldText was not found near lines 5-5 of a.txt\./);
    expect(edited.text).toContain('Closest line: 5');
    expect(edited.text).toContain('- lin 5\n+ line 5');
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe(SOURCE);
  });

  it('writes outside the worktree, into .git or through a symlink are refused', async () => {
    const root = tempTree({ 'repo/a.txt': 'a\n', 'outside/secret.txt': 's\n' });
    symlinkSync(join(root, 'outside'), join(root, 'repo/link'));
    const ws = openWorkspace(join(root, 'repo'));
    const attempts = [
      ['write_file', { path: '../escape.txt', content: 'x' }],
      ['write_file', { path: '/tmp/escape.txt', content: 'x' }],
      ['write_file', { path: 'link/secret.txt', content: 'x' }],
      ['write_file', { path: '.git/hooks/pre-commit', content: 'x' }],
      ['read_file', { path: '../outside/secret.txt' }],
      ['read_file', { path: 'link/secret.txt' }],
    ] as const;
    for (const [tool, args] of attempts) {
      const result = await run(ws, tool, args);
      expect(result.ok, `${tool} ${args.path}`).toBe(false);
      expect(result.text).toMatch(/^DENIED: /);
    }
    expect(readFileSync(join(root, 'outside/secret.txt'), 'utf8')).toBe('s\n');
  });

  it('glob and grep list and search inside the worktree', async () => {
    const ws = openWorkspace(
      tempTree({ 'src/a.js': 'const alpha = 1;\n', 'src/b.ts': 'const beta = 2;\n', 'node_modules/x.js': 'alpha\n' }),
    );
    const globbed = await run(ws, 'glob', { pattern: 'src/*.js' });
    expect(globbed.text).toContain('src/a.js');
    expect(globbed.text).not.toContain('b.ts');
    const found = await run(ws, 'grep', { pattern: 'alpha', fixedStrings: true });
    expect(found.text).toContain('src/a.js:1: const alpha = 1;');
    expect(found.text).not.toContain('node_modules');
    const bad = await run(ws, 'grep', { pattern: '(' });
    expect(bad.ok).toBe(false);
  });
});

describe('command tools run in the sandbox', () => {
  it('run_command: a recognized test runner uses the verify profile; anything else the build profile', async () => {
    const ws = openWorkspace(tempTree({ 'x.test.js': "import { test } from 'node:test'; test('t', () => {});\n" }));
    const planned = planToolCall(ws, 'run_command', { argv: ['node', '--test'] }, ALL);
    expect(planned.kind === 'plan' && planned.plan.operation).toEqual({
      op: 'exec',
      argv: ['node', '--test'],
      cwd: ws.path,
      profile: 'verify',
      recognizedRunner: true,
    });
    const other = planToolCall(ws, 'run_command', { argv: ['sh', '-c', 'echo hi'] }, ALL);
    expect(other.kind === 'plan' && other.plan.operation).toMatchObject({ profile: 'build', recognizedRunner: false });
  });

  it('a command sees no host environment and no host home; it writes only the worktree', async () => {
    process.env.CRUSTCORE_AGENT_TEST_SECRET = 'sk-proj-should-never-be-visible-0123456789';
    const root = tempTree({ 'a.txt': 'a\n' });
    const ws = openWorkspace(root);
    const ran = await run(ws, 'run_command', {
      argv: ['sh', '-c', 'env; echo ---; ls /root 2>&1; ls $HOME; echo made > made.txt'],
    });
    delete process.env.CRUSTCORE_AGENT_TEST_SECRET;
    expect(ran.text).toMatch(/^exit code 0 \(\d+ ms, build sandbox, no network\)/);
    expect(ran.text).not.toContain('should-never-be-visible');
    expect(readFileSync(join(root, 'made.txt'), 'utf8')).toBe('made\n');
    const failing = await run(ws, 'run_command', { argv: ['sh', '-c', 'echo oops >&2; exit 3'] });
    expect(failing.ok).toBe(false);
    expect(failing.text).toMatch(/^exit code 3/);
    expect(failing.text).toContain('<untrusted-data source="stderr of sh -c echo oops  &2; exit 3">\noops');
  });

  it('check_syntax: node --check for JavaScript, python3 -m ast for Python, JSON in process', async () => {
    const ws = openWorkspace(
      tempTree({
        'ok.js': 'export const a = 1;\n',
        'bad.js': 'export const = ;\n',
        'bad.py': 'def f(:\n',
        'x.json': '{"a": }',
        'y.rs': '',
      }),
    );
    expect((await run(ws, 'check_syntax', { path: 'ok.js' })).text).toBe('ok.js: syntax OK');
    const bad = await run(ws, 'check_syntax', { path: 'bad.js' });
    expect(bad.ok).toBe(false);
    expect(bad.text).toContain('SyntaxError');
    expect((await run(ws, 'check_syntax', { path: 'bad.py' })).ok).toBe(false);
    expect((await run(ws, 'check_syntax', { path: 'x.json' })).text).toMatch(/^x.json: invalid JSON/);
    expect(planToolCall(ws, 'check_syntax', { path: 'y.rs' }, ALL)).toMatchObject({ kind: 'invalid' });
    // Module code is parsed as a module; the recorded argv names the file.
    const planned = planToolCall(ws, 'check_syntax', { path: 'ok.js' }, ALL);
    expect(planned.kind === 'plan' && planned.plan.operation).toMatchObject({
      op: 'exec',
      argv: ['sh', '-c', 'exec node --input-type=module --check < "$1"', 'check_syntax', 'ok.js'],
      profile: 'build',
    });
    const cjs = planToolCall(ws, 'check_syntax', { path: 'c.cjs' }, ALL);
    expect(cjs.kind === 'plan' && cjs.plan.operation).toMatchObject({
      argv: ['node', '--check', 'c.cjs'],
      profile: 'verify',
    });
  });
});

describe('authority objects', () => {
  it('a workspace cannot be forged from a plain object', () => {
    const fake = { path: '/', root: {}, writeCap: {}, readCap: {}, gate: {}, scrub: (t: string) => t };
    // @ts-expect-error a plain object is not an AgentWorkspace (private fields)
    const forged: AgentWorkspace = fake;
    expect(forged).toBe(fake);
    expect(() => planToolCall(fake as unknown as AgentWorkspace, 'read_file', { path: 'a' }, ALL)).toThrow();
  });
});
