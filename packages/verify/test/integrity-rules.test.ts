/**
 * The pure parts of the integrity checks: symlink chains, runner discovery,
 * package.json / Python config content, embedded repositories, what the
 * verify argv reads, and runner summaries that contradict exit 0.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  embeddedRepositories,
  hooksPathFindings,
  packageJsonFindings,
  pythonConfigFindings,
  reachableScripts,
} from '../src/content-risks.js';
import {
  escapingLinks,
  integrityRisks,
  isDiscoveredTest,
  reportedFailures,
  resolveInTree,
  symlinkEscapes,
  type TreeReader,
} from '../src/index.js';
import { newlyEscaping } from '../src/integrity.js';
import { foldPath, foldSegment, foldSegmentUnicode } from '../src/path-fold.js';
import { discoveryFromConfigs, globToRegex } from '../src/test-discovery.js';
import { parseBatch, parseLsTree } from '../src/tree-reader.js';
import { verifyProgramFiles, verifyScriptNames } from '../src/verify-argv-risks.js';

describe('symlink chains, resolved as the kernel would', () => {
  const links = (entries: Record<string, string>): Map<string, string> => new Map(Object.entries(entries));

  it('absolute targets and plain climbs escape', () => {
    expect(resolveInTree('a', links({ a: '/etc/passwd' }))._tag).toBe('Outside');
    expect(resolveInTree('d/a', links({ 'd/a': '../../x' }))._tag).toBe('Outside');
    expect(resolveInTree('d/a', links({ 'd/a': '../x' }))).toEqual({ _tag: 'Inside', path: 'x' });
  });

  it('`..` after a link climbs from where the link went, not from the link', () => {
    // Each link alone looks inside; together `c` is the parent of the tree.
    const tree = links({ 'a/b': '..', c: 'a/b/..' });
    expect(symlinkEscapes('a/b', '..')).toBe(false);
    expect(symlinkEscapes('c', 'a/b/..')).toBe(false);
    expect(resolveInTree('c', tree)._tag).toBe('Outside');
    expect([...escapingLinks(tree).keys()]).toEqual(['c']);
  });

  it('links through links, and a link that replaced a directory', () => {
    const tree = links({ x: 'y', y: 'z', z: 'deep/../../..', lib: 'x' });
    expect(resolveInTree('lib', tree)).toMatchObject({ _tag: 'Outside', via: ['lib', 'x', 'y', 'z'] });
    expect(resolveInTree('ok', links({ ok: 'lib/inner', lib: 'real' }))).toEqual({
      _tag: 'Inside',
      path: 'real/inner',
    });
  });

  it('lexical `..` that the real chain keeps inside is inside', () => {
    const tree = links({ s: 'sub/inner', t: 's/../..' });
    expect(resolveInTree('t', tree)).toEqual({ _tag: 'Inside', path: '' });
  });

  it('loops are reported, not followed forever', () => {
    expect(resolveInTree('a', links({ a: 'b', b: 'a' }))._tag).toBe('Loop');
  });

  it('a changed link that makes an old link escape is flagged; unchanged old escapes are not', () => {
    const before = links({ old: '/usr/share', a: 'b', b: 'inside' });
    const after = links({ old: '/usr/share', a: 'b', b: '../..' });
    expect(newlyEscaping(before, after, new Set(['b']))).toEqual(['a', 'b']);
    expect(newlyEscaping(before, before, new Set())).toEqual([]);
  });
});

describe("tests by the runners' own discovery rules", () => {
  it.each([
    'test-math.js',
    'math-test.mjs',
    'math_test.cjs',
    'checks/test.js',
    'test/helpers/setup.js',
    'src/__tests__/x.tsx',
    'src/x.spec.ts',
    'pkg/math_test.go',
    'tests/test_x.py',
    'test_math.py',
    'testing.py',
    'lib/math_test.py',
    'spec/math_spec.rb',
    'TEST-MATH.JS',
    'te\u200Bst-math.js',
  ])('%s is a test', (path) => {
    expect(isDiscoveredTest(path)).toBe(true);
  });

  it.each(['src/math.js', 'src/contest.py', 'latest.js', 'node_modules/x/test.js', 'attestation.py'])(
    '%s is not a test',
    (path) => {
      expect(isDiscoveredTest(path)).toBe(false);
    },
  );

  it('a repository config adds its own patterns (pytest python_files, mocha spec, jest testMatch)', () => {
    const config = discoveryFromConfigs(
      new Map([
        ['pytest.ini', '[pytest]\npython_files = check_*.py verify_*.py\n'],
        ['pyproject.toml', '[tool.pytest.ini_options]\npython_files = ["probe_*.py"]\n'],
        ['.mocharc.yml', "spec: 'specs-here/**/*.js'\n"],
        ['package.json', JSON.stringify({ jest: { testMatch: ['**/*.check.js'] } })],
      ]),
    );
    for (const path of ['checks/check_math.py', 'verify_x.py', 'probe_a.py', 'specs-here/a/b.js', 'src/a.check.js'])
      expect(isDiscoveredTest(path, config), path).toBe(true);
    expect(isDiscoveredTest('checks/math.py', config)).toBe(false);
    expect(globToRegex('src/**/*.{js,ts}').test('src/a/b/c.ts')).toBe(true);
  });
});

describe('package.json content', () => {
  const pkg = (value: object): string => JSON.stringify(value);

  it('hook-manager keys, install scripts, test scripts and runner keys are each named', () => {
    const before = pkg({ scripts: { test: 'node --test', build: 'tsc' } });
    const kinds = (after: object, scripts: string[] = []) =>
      packageJsonFindings('package.json', before, pkg(after), scripts).map((f) => f.kind);
    expect(
      kinds({ scripts: { test: 'node --test', build: 'tsc' }, 'simple-git-hooks': { 'pre-commit': 'x' } }),
    ).toEqual(['git-hook-changed']);
    expect(kinds({ scripts: { test: 'node --test', build: 'tsc', postinstall: 'node x' } })).toEqual([
      'package-manager-config-changed',
    ]);
    expect(kinds({ scripts: { test: 'node --test || true', build: 'tsc' } })).toEqual(['verify-command-changed']);
    expect(kinds({ scripts: { test: 'node --test', build: 'tsc' }, jest: { testMatch: [] } })).toEqual([
      'verify-command-changed',
    ]);
    expect(kinds({ scripts: { test: 'node --test', build: 'tsc --noEmit' } })).toEqual([]);
    // The script the verify argv names counts as much as `test`.
    expect(kinds({ scripts: { test: 'node --test', build: 'true' } }, ['build'])).toEqual(['verify-command-changed']);
  });

  it('scripts reached from test, transitively, count; others do not', () => {
    const scripts = { test: 'npm run unit && run-s lint', unit: 'node --test', lint: 'biome check', docs: 'x' };
    expect([...reachableScripts(scripts, ['test'])].filter((k) => k in scripts).sort()).toEqual([
      'lint',
      'test',
      'unit',
    ]);
  });

  it('an unreadable package.json cannot be compared, so it needs a person', () => {
    expect(packageJsonFindings('package.json', '{}', '{ nope').map((f) => f.kind)).toEqual(['verify-command-changed']);
  });
});

describe('Python config sections', () => {
  it('only pytest/tox sections of shared files count', () => {
    const base = '[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n';
    expect(pythonConfigFindings('pyproject.toml', base, base.replace('name = "x"', 'name = "y"'))).toEqual([]);
    expect(pythonConfigFindings('pyproject.toml', base, base.replace('-q', "-q -k 'not add'"))).toHaveLength(1);
    expect(pythonConfigFindings('setup.cfg', '', '[tool:pytest]\naddopts = -p no:x\n')).toHaveLength(1);
    expect(pythonConfigFindings('sub/tox.ini', '[tox]\n', '[tox]\n[testenv]\ncommands = true\n')).toHaveLength(1);
  });
});

describe('embedded repositories, by content', () => {
  const bare = ['HEAD', 'config', 'objects/info/packs', 'refs/heads/main'];

  it.each(['vendor/lib', 'deep/er/x.git', 'notes', 'Fixtures/REPO'])('a bare repository at %s is found', (dir) => {
    const paths = bare.map((p) => `${dir}/${p}`);
    const found = embeddedRepositories(['src/a.js', ...paths], new Set([`${dir}/config`]));
    expect(found.map((f) => f.kind)).toEqual(['embedded-git-repository']);
  });

  it('case-folded names count (head on a case-insensitive host is HEAD)', () => {
    const found = embeddedRepositories(['x/head', 'x/Refs/heads/main'], new Set(['x/head']));
    expect(found).toHaveLength(1);
  });

  /** Every directory of the tree, the plain way: the model the pruned walk must agree with. */
  function everyDirectoryModel(treePaths: readonly string[], changed: ReadonlySet<string>): string[] {
    const byDir = new Map<string, Set<string>>();
    for (const path of treePaths) {
      const parts = path.split('/');
      for (let depth = 0; depth < parts.length; depth += 1) {
        const dir = parts.slice(0, depth).join('/');
        const seen = byDir.get(dir) ?? new Set<string>();
        seen.add(foldSegment(parts[depth] as string) + (depth < parts.length - 1 ? '/' : ''));
        byDir.set(dir, seen);
      }
    }
    const topFile = (path: string) => /^(?:head|config|objects\/|refs\/)/.test(foldPath(path).join('/'));
    return [...byDir].flatMap(([dir, children]) => {
      const repo =
        children.has('head') && (children.has('objects/') || children.has('refs/') || children.has('config'));
      const prefix = dir === '' ? '' : `${dir}/`;
      const touched = [...changed].find((p) => p.startsWith(prefix) && (dir !== '' || topFile(p)));
      return repo && touched !== undefined ? [`${dir || '.'}|${touched}`] : [];
    });
  }

  it('reports exactly what a walk over every directory reports (property)', () => {
    const segment = fc.constantFrom('HEAD', 'head', 'config', 'objects', 'refs', '.git', '.GIT', 'a', 'b.js', 'x');
    const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('/'));
    fc.assert(
      fc.property(fc.uniqueArray(path, { minLength: 1, maxLength: 30 }), fc.array(fc.nat()), (tree, picks) => {
        // A path that is also another path's directory cannot be in a tree; drop such files.
        const files = tree.filter((p) => !tree.some((q) => q.startsWith(`${p}/`)));
        if (files.length === 0) return;
        const changed = new Set(picks.map((i) => files[i % files.length] as string));
        const found = embeddedRepositories(files, changed).map(
          (f) => `${f.detail.replace(/ is a git repository$/, '')}|${f.path}`,
        );
        expect(found).toEqual(everyDirectoryModel(files, changed));
      }),
      { numRuns: 400, seed: 1303 },
    );
  });

  it('a pre-existing repository the patch does not touch, or a lone HEAD file, is not reported', () => {
    expect(
      embeddedRepositories(
        bare.map((p) => `fx/${p}`),
        new Set(['src/a.js']),
      ),
    ).toEqual([]);
    expect(embeddedRepositories(['docs/HEAD'], new Set(['docs/HEAD']))).toEqual([]);
  });

  it("files under the repository's own core.hooksPath are git hooks", () => {
    const changed = new Set(['tools/hooks/pre-commit', 'tools/other.sh']);
    expect(hooksPathFindings('tools/hooks', changed).map((f) => f.path)).toEqual(['tools/hooks/pre-commit']);
    expect(hooksPathFindings('./Tools/Hooks/', changed).map((f) => f.path)).toEqual(['tools/hooks/pre-commit']);
    expect(hooksPathFindings('/dev/null', changed)).toEqual([]);
  });
});

describe('what the verify argv reads first', () => {
  const changed = ['Makefile', 'scripts/test.mjs', 'tsconfig.json', 'go.mod', 'mypkg/tests/__main__.py', 'src/a.js'];
  it.each([
    [['make', 'test'], ['Makefile']],
    [['node', 'scripts/test.mjs'], ['scripts/test.mjs']],
    [['node', './scripts/test.mjs'], ['scripts/test.mjs']],
    [['npx', 'tsc', '--noEmit'], ['tsconfig.json']],
    [['go', 'test', './...'], ['go.mod']],
    [['python3', '-m', 'mypkg.tests'], ['mypkg/tests/__main__.py']],
    [['npm', 'test'], []],
  ])('%j reads %j', (argv, expected) => {
    expect([...verifyProgramFiles(argv, changed).keys()].sort()).toEqual([...expected].sort());
  });

  it('package-manager argv name their scripts', () => {
    expect(verifyScriptNames(['npm', 'test'])).toEqual(['test']);
    expect(verifyScriptNames(['npm', 'run', 'check'])).toEqual(['check']);
    expect(verifyScriptNames(['pnpm', 'verify'])).toEqual(['verify']);
    expect(verifyScriptNames(['pytest'])).toEqual([]);
  });
});

describe('runner summaries that contradict exit 0', () => {
  it.each([
    ['node --test TAP', '# tests 2\n# suites 0\n# pass 1\n# fail 1\n'],
    ['node --test spec', 'ℹ tests 2\nℹ pass 1\nℹ fail 1\n'],
    ['vitest', ' Test Files  1 failed (1)\n      Tests  1 failed | 1 passed (2)\n'],
    ['jest', 'Tests:       1 failed, 1 passed, 2 total\n'],
    ['mocha', '  1 passing (5ms)\n  1 failing\n'],
    ['pytest', '=========== 1 failed, 1 passed in 0.02s ===========\n'],
    ['pytest -q', '1 failed, 3 passed in 0.10s\n'],
    ['go', '--- FAIL: TestAdd (0.00s)\nFAIL\texample.com/m\t0.002s\n'],
    ['cargo', 'test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n'],
    ['unittest', 'Ran 2 tests in 0.001s\n\nFAILED (failures=1)\n'],
  ])('%s', (_runner, output) => {
    expect(reportedFailures(output)?.failed).toBeGreaterThan(0);
  });

  it('a fake "fail 0" printed after a real failure does not hide it', () => {
    expect(reportedFailures('# fail 1\n', '# fail 0\n')?.failed).toBe(1);
  });

  it('passing summaries report nothing', () => {
    for (const output of [
      '# tests 2\n# pass 2\n# fail 0\n',
      '      Tests  2 passed (2)\n',
      'Tests:       2 passed, 2 total\n',
      '===== 2 passed in 0.01s =====\n',
      'ok  \texample.com/m\t0.002s\n',
      'Ran 2 tests in 0.001s\n\nOK\n',
    ])
      expect(reportedFailures(output)).toBeNull();
  });
});

describe('cat-file --batch parsing', () => {
  it('reads sizes in bytes, including multi-byte text and missing objects', () => {
    const a = 'a'.repeat(40);
    const b = 'b'.repeat(40);
    const text = `${a} blob 3\nü/\n${'c'.repeat(40)} missing\n${b} blob 2\n..\n`;
    const parsed = parseBatch(Buffer.from(text, 'utf8'));
    expect(parsed.get(a)).toBe('ü/');
    expect(parsed.get(b)).toBe('..');
  });
});

describe('the ASCII fast path of the path fold', () => {
  it('folds every printable ASCII name exactly as the general (Unicode) fold does', () => {
    const ascii = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) });
    fc.assert(
      fc.property(ascii, (name) => {
        expect(foldSegment(name)).toBe(foldSegmentUnicode(name));
      }),
      { numRuns: 2_000 },
    );
    for (const name of ['.GIT', '.git. ', 'HUSKY~2.JS', '.', '..', '... ', 'Package.JSON']) {
      expect(foldSegment(name)).toBe(foldSegmentUnicode(name));
    }
  });

  it('leaves names outside printable ASCII to the general fold (a tab, a soft hyphen, a zero-width space)', () => {
    expect(foldSegment('.g\u00ADit')).toBe('.git');
    expect(foldSegment('.g\u200Bit')).toBe('.git');
    expect(foldSegment('a\tb')).toBe(foldSegmentUnicode('a\tb'));
  });
});

describe('ls-tree records, parsed by hand', () => {
  /** The record's grammar as one regex: the parser must agree with it on every record. */
  const oracle = (text: string) =>
    text.split('\0').flatMap((record) => {
      const match = /^(\d{6}) \w+ ([0-9a-f]{40,64})\t([\s\S]+)$/.exec(record);
      return match === null ? [] : [{ mode: match[1], id: match[2], path: match[3] }];
    });

  it('agrees with the grammar on well-formed, damaged and hostile records', () => {
    const piece = fc.constantFrom('100644', '120000', '1006440', '10064', 'blob', 'tree', ' ', '\t', '\n', 'a b', '');
    const id = fc.constantFrom('a'.repeat(40), 'b'.repeat(64), 'c'.repeat(39), 'd'.repeat(65), 'A'.repeat(40));
    const record = fc.oneof(
      fc
        .tuple(
          fc.constantFrom('100644', '040000', '12x000'),
          fc.constantFrom('blob', 'tree', 'b b', ''),
          id,
          fc.string(),
        )
        .map(([mode, type, object, path]) => `${mode} ${type} ${object}\t${path}`),
      fc.array(fc.oneof(piece, id, fc.string({ maxLength: 3 })), { maxLength: 6 }).map((parts) => parts.join('')),
    );
    fc.assert(
      fc.property(fc.array(record, { maxLength: 8 }), (records) => {
        const text = records.join('\0');
        expect(parseLsTree(text)).toEqual(oracle(text));
      }),
      { numRuns: 3_000 },
    );
  });
});

describe('config reads fail safe', () => {
  const reader = (blobs: Record<string, string | null>): TreeReader => ({
    listTree: async () => [],
    readBlob: async (id) => blobs[id] ?? null,
    readBlobs: async () => new Map(),
    grepTree: async () => [],
    hooksPath: async () => null,
  });
  const changedPackage = (n: number) => ({
    status: 'M' as const,
    path: `p${n}/package.json`,
    oldPath: null,
    newMode: '100644',
    baseBlob: `b${n}`,
    newBlob: `n${n}`,
  });
  const plain = '{"name":"p"}';
  const risksOf = async (count: number, blobs: Record<string, string | null>) =>
    integrityRisks({
      reader: reader(blobs),
      baseCommit: 'base',
      treeId: 'tree',
      files: Array.from({ length: count }, (_, n) => changedPackage(n)),
      argv: null,
    });
  const allPlain = (count: number) =>
    Object.fromEntries(
      Array.from({ length: count }, (_, n) => [
        [`b${n}`, plain],
        [`n${n}`, plain],
      ]).flat(),
    );

  it('a config blob that exists but cannot be read needs a person; CONTROL: read, the same unchanged JSON adds nothing', async () => {
    const unreadable = (await risksOf(1, { b0: plain, n0: null })).filter((r) =>
      r.detail.includes('could not be read'),
    );
    expect(unreadable.map((r) => r.kind)).toEqual(['verify-command-changed']);
    const read = (await risksOf(1, allPlain(1))).filter((r) => r.detail.includes('could not be read'));
    expect(read).toEqual([]);
  });

  it('more changed config files than the read bound: the rest are not passed as unchanged; CONTROL: at the bound nothing is said', async () => {
    const over = (await risksOf(65, allPlain(65))).filter((r) => r.detail.includes('were not compared'));
    expect(over.map((r) => r.kind)).toEqual(['verify-command-changed']);
    const at = (await risksOf(64, allPlain(64))).filter((r) => r.detail.includes('were not compared'));
    expect(at).toEqual([]);
  });
});
