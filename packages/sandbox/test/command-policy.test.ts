import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { argvHash, classifyVerifyCommand, decideSandboxCommand, shellUse } from '../src/index.js';

describe('classifyVerifyCommand', () => {
  it.each([
    [['npm', 'test'], 'npm'],
    [['npm', 't'], 'npm'],
    [['npm', 'run', 'test'], 'npm'],
    [['npm', 'test', '--', '--grep', 'x; curl evil'], 'npm'],
    [['pnpm', 'test'], 'pnpm'],
    [['yarn', 'test'], 'yarn'],
    [['yarn', 'run', 'test'], 'yarn'],
    [['/usr/bin/npm', 'test'], 'npm'],
    [['node', '--test'], 'node-test'],
    [['node', '--test', 'test/a.test.js'], 'node-test'],
    [['npx', 'vitest', 'run'], 'vitest'],
    [['npx', '--no-install', 'jest'], 'jest'],
    [['vitest', 'run'], 'vitest'],
    [['vitest'], 'vitest'],
    [['jest', '--ci'], 'jest'],
    [['pytest', '-q'], 'pytest'],
    [['python', '-m', 'pytest'], 'pytest'],
    [['python3', '-m', 'pytest', 'tests/'], 'pytest'],
    [['cargo', 'test'], 'cargo-test'],
    [['go', 'test', './...'], 'go-test'],
    [['make', 'test'], 'make-test'],
    [['make', '-j4', 'test'], 'make-test'],
  ] as const)('recognizes %j', (argv, runner) => {
    expect(classifyVerifyCommand(argv)).toEqual({ _tag: 'TestRunner', runner, argv });
  });

  it.each([
    [['sh', '-c', 'npm test && curl x']],
    [['bash', '-c', 'npm test']],
    [['npm test']],
    [['npm', 'install']],
    [['npm', 'test', '--registry=http://evil']],
    [['npm', 'run', 'build']],
    [['npm', 'run', 'test', 'extra']],
    [['node', 'script.js']],
    [['node', '--test', '-e', 'require("child_process")']],
    [['node', '--test', '--require', './x.js']],
    [['npx', 'curl']],
    [['npx', '-p', 'evil', 'vitest']],
    [['vitest', 'watch']],
    [['jest', '--watch']],
    [['python', 'evil.py']],
    [['python', '-c', 'import pytest']],
    [['cargo', 'build']],
    [['go', 'test', '-exec', 'sh']],
    [['go', 'run', '.']],
    [['make', 'install']],
    [['make', 'test', 'install']],
    [['./node_modules/.bin/vitest']],
    [['/tmp/npm', 'test']],
    [['curl', 'http://x']],
    [[]],
  ] as const)('does not recognize %j', (argv) => {
    expect(classifyVerifyCommand(argv)._tag).toBe('Unrecognized');
  });

  it('never recognizes an argv that starts a shell', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('sh', 'bash', '/bin/sh', 'dash', 'env'),
        fc.array(fc.string(), { maxLength: 5 }),
        (shell, rest) => {
          expect(classifyVerifyCommand([shell, ...rest])._tag).toBe('Unrecognized');
        },
      ),
    );
  });
});

describe('shellUse', () => {
  it.each([
    [['sh', '-c', 'x']],
    [['/bin/bash', 'script.sh']],
    [['env', 'FOO=1', 'sh', '-c', 'x']],
    [['env', '-S', 'npm test']],
    [['nice', '-n', '5', 'bash']],
    [['timeout', '5', 'python3', '-c', 'x']],
    [['node', '-e', 'x']],
    [['node', '--eval=x']],
    [['node', '-r', 'mod', '-e', 'x']],
    [['node', '-pe', 'x']],
    [['python3.11', '-c', 'x']],
    [['perl', '-e', 'x']],
    [['awk', 'BEGIN{system("sh")}']],
    [['xargs', 'sh']],
  ] as const)('sees a shell or inline code in %j', (argv) => {
    expect(shellUse(argv)).not.toBeNull();
  });

  it.each([
    [['npm', 'test']],
    [['node', 'script.js', '-e']],
    [['python3', '-m', 'pytest', '-c', 'pytest.ini']],
    [['node', '--test']],
    [['cargo', 'test']],
  ] as const)('sees no shell in %j', (argv) => expect(shellUse(argv)).toBeNull());
});

describe('decideSandboxCommand', () => {
  it('allows recognized runners under verify, asks for anything else, and honors exact-argv approvals', () => {
    expect(decideSandboxCommand('verify', ['npm', 'test'])).toEqual({ _tag: 'Allowed', basis: 'RecognizedTestRunner' });
    const custom = ['node', 'scripts/check.js'];
    const asked = decideSandboxCommand('verify', custom);
    expect(asked).toMatchObject({ _tag: 'NeedsApproval', argvHash: argvHash(custom) });
    expect(decideSandboxCommand('verify', custom, new Set([argvHash(custom)]))).toEqual({
      _tag: 'Allowed',
      basis: 'ApprovedExactArgv',
    });
    // An approval binds the exact argv: one more argument is a different command.
    expect(decideSandboxCommand('verify', [...custom, '--x'], new Set([argvHash(custom)]))._tag).toBe('NeedsApproval');
  });

  it('denies shells where the profile forbids them, even with an approval', () => {
    const argv = ['sh', '-c', 'npm test && curl x'];
    expect(decideSandboxCommand('verify', argv, new Set([argvHash(argv)]))._tag).toBe('Denied');
    expect(decideSandboxCommand('build', argv)).toEqual({ _tag: 'Allowed', basis: 'ProfilePermitsAnyCommand' });
  });
});
