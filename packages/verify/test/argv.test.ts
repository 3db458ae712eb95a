import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quoteArgv, splitArgv } from '../src/index.js';

const words = (text: string) => {
  const result = splitArgv(text);
  return result._tag === 'Right' ? result.right : result.left.reason;
};

describe('splitArgv', () => {
  it('splits like a POSIX shell without expansion', () => {
    expect(words('npm test')).toEqual(['npm', 'test']);
    expect(words('  node   --test  ')).toEqual(['node', '--test']);
    expect(words(`pytest -k 'a or b' "x y"`)).toEqual(['pytest', '-k', 'a or b', 'x y']);
    expect(words(`echo 'it'\\''s'`)).toEqual(['echo', "it's"]);
    expect(words('a\\ b c')).toEqual(['a b', 'c']);
    expect(words(`"a\\"b" "c\\d" ''`)).toEqual(['a"b', 'c\\d', '']);
    expect(words(`'$HOME' '*' 'a&&b' '#x'`)).toEqual(['$HOME', '*', 'a&&b', '#x']);
    expect(words('go test ./...')).toEqual(['go', 'test', './...']);
    expect(words('a\\\nb')).toEqual(['ab']);
    expect(words('node --foo=bar')).toEqual(['node', '--foo=bar']);
  });

  it('rejects operators, redirections, expansions, globs, comments and assignments as typed errors', () => {
    for (const [text, reason] of [
      ['npm test && curl x', 'operator'],
      ['npm test || true', 'operator'],
      ['npm test | tee log', 'operator'],
      ['npm test; rm -rf /', 'operator'],
      ['npm test > out', 'operator'],
      ['npm test 2>&1', 'operator'],
      ['npm test < in', 'operator'],
      ['npm test &', 'operator'],
      ['(npm test)', 'operator'],
      ['npm test\nrm x', 'operator'],
      ['echo $HOME', 'expansion'],
      ['echo "$(id)"', 'expansion'],
      ['echo `id`', 'expansion'],
      ['ls ~/x', 'expansion'],
      ['ls *.js', 'glob'],
      ['ls a?', 'glob'],
      ['npm test # comment', 'comment'],
      ['FOO=1 npm test', 'assignment'],
      ['', 'empty'],
      ['   ', 'empty'],
      ["echo 'open", 'unterminated-quote'],
      ['echo "open', 'unterminated-quote'],
      ['echo \\', 'trailing-backslash'],
    ] as const) {
      const result = splitArgv(text);
      expect(result._tag, text).toBe('Left');
      if (result._tag === 'Left') {
        expect(result.left._tag).toBe('ArgvError');
        expect(result.left.reason, text).toBe(reason);
      }
    }
  });

  it('is bounded', () => {
    expect(words('a '.repeat(300))).toBe('too-many-words');
    expect(words('a'.repeat(9000))).toBe('too-long');
  });

  it('quoteArgv round-trips through splitArgv for any argv', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 12 }), { minLength: 1, maxLength: 8 }), (argv) => {
        const result = splitArgv(quoteArgv(argv));
        expect(result._tag).toBe('Right');
        if (result._tag === 'Right') expect(result.right).toEqual(argv);
      }),
    );
  });
});
