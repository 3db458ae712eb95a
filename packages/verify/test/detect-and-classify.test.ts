import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { classifyPath, decodeWorkerClaim, detectVerifyCommand, symlinkEscapes } from '../src/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'cc-detect-'));
  dirs.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe('detectVerifyCommand', () => {
  it('finds each ecosystem', async () => {
    expect(
      (await detectVerifyCommand(project({ 'package.json': '{"scripts":{"test":"node --test"}}' })))?.argv,
    ).toEqual(['npm', 'test']);
    expect(
      await detectVerifyCommand(
        project({ 'package.json': '{"scripts":{"test":"echo \\"Error: no test specified\\" && exit 1"}}' }),
      ),
    ).toBeNull();
    expect((await detectVerifyCommand(project({ 'pytest.ini': '[pytest]\n' })))?.argv).toEqual([
      'python3',
      '-m',
      'pytest',
    ]);
    expect((await detectVerifyCommand(project({ 'pyproject.toml': '[tool.pytest.ini_options]\n' })))?.source).toBe(
      'pyproject.toml',
    );
    expect((await detectVerifyCommand(project({ 'tests/test_x.py': '' })))?.runner).toBe('pytest');
    expect((await detectVerifyCommand(project({ 'Cargo.toml': '[package]\n' })))?.argv).toEqual(['cargo', 'test']);
    expect((await detectVerifyCommand(project({ 'go.mod': 'module x\n' })))?.argv).toEqual(['go', 'test', './...']);
    expect((await detectVerifyCommand(project({ Makefile: 'all:\n\ttrue\ntest:\n\ttrue\n' })))?.argv).toEqual([
      'make',
      'test',
    ]);
    expect(await detectVerifyCommand(project({ 'README.md': '' }))).toBeNull();
  });
});

describe('classifyPath', () => {
  it('most dangerous class first', () => {
    expect(classifyPath('src/a.ts')).toBe('source');
    expect(classifyPath('test/a.test.ts')).toBe('test');
    expect(classifyPath('pkg/foo_test.go')).toBe('test');
    expect(classifyPath('tests/test_x.py')).toBe('test');
    expect(classifyPath('src/__tests__/x.js')).toBe('test');
    expect(classifyPath('.github/workflows/ci.yml')).toBe('ci-workflow');
    expect(classifyPath('.gitlab-ci.yml')).toBe('ci-workflow');
    expect(classifyPath('package-lock.json')).toBe('lockfile');
    expect(classifyPath('sub/Cargo.lock')).toBe('lockfile');
    expect(classifyPath('package.json')).toBe('config');
    expect(classifyPath('vitest.config.ts')).toBe('test-runner-config');
    expect(classifyPath('docs/intro.md')).toBe('docs');
    expect(classifyPath('.env')).toBe('secret');
    expect(classifyPath('tests/.env.local')).toBe('secret');
    expect(classifyPath('deploy/server.pem')).toBe('secret');
    expect(classifyPath('home/.ssh/id_rsa')).toBe('secret');
    expect(classifyPath('aws/credentials')).toBe('secret');
  });
  it('symlink escapes', () => {
    expect(symlinkEscapes('a/link', '../b')).toBe(false);
    expect(symlinkEscapes('a/link', '../../b')).toBe(true);
    expect(symlinkEscapes('link', '/etc/passwd')).toBe(true);
  });
});

describe('decodeWorkerClaim', () => {
  it('reads a JSON claim from stdout; anything else is transcript', () => {
    expect(decodeWorkerClaim('{"summary":"s","done":true}')).toEqual({ summary: 's', done: true });
    expect(decodeWorkerClaim('working...\n{"done":false,"risks":["r"]}\n')).toEqual({ done: false, risks: ['r'] });
    expect(decodeWorkerClaim('{"done":"yes"}')).toBeNull();
    expect(decodeWorkerClaim('[1,2]')).toBeNull();
    expect(decodeWorkerClaim('plain text')).toBeNull();
  });
});
