/**
 * The repo capsule on a generated multi-language repository (symbols at
 * their exact lines), incremental re-indexing (one changed file → one file
 * parsed, counted through `stats.parsed`), typed errors on bad input, and
 * the capsule of this repository itself.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildIndex, type CapsuleFile, type IndexResult, RepoCapsuleCodec } from '../src/index.js';
import { type Fixture, git, makeRepo } from './fixture.js';

const TS = `import { x } from './x.js';

export interface Shape {
  area(): number;
}

export type Id = string;

export class Square implements Shape {
  area(): number {
    return 1;
  }
}

export const makeId = (n: number): Id => String(n);

function helper() {}
`;
const PY = `import os


def load(path):
    return open(path)


class Store:
    def get(self, key):
        return None


def _hidden():
    pass


@cache
def decorated():
    pass
`;
const GO = `package store

type Store struct {
	items map[string]string
}

type Getter interface {
	Get(key string) string
}

func New() *Store {
	return &Store{}
}

func (s *Store) Get(key string) string {
	return s.items[key]
}
`;
const RS = `use std::collections::HashMap;

pub struct Cache {
    map: HashMap<String, String>,
}

impl Cache {
    pub fn new() -> Self {
        Cache { map: HashMap::new() }
    }
}

pub trait Fetch {
    fn fetch(&self) -> String;
}

fn private_helper() {}
`;
const RB = `class Greeter\n  def hello\n  end\nend\n`;

const FILES = {
  'src/shape.ts': TS,
  'py/store.py': PY,
  'go/store.go': GO,
  'rust/src/lib.rs': RS,
  'lib/greeter.rb': RB,
  'test/shape.test.ts': `import { Square } from '../src/shape.js';\ntest('area', () => {});\n`,
  'README.md': '# Fixture\n',
  '.github/workflows/ci.yml': 'on: push\n',
  'package.json': JSON.stringify({ scripts: { test: 'vitest run', build: 'tsc' }, devDependencies: { vitest: '4' } }),
  'go.mod': 'module example.com/store\n\ngo 1.22\n',
  'Cargo.toml': '[package]\nname = "cache"\nversion = "0.1.0"\n',
  'pyproject.toml': '[project]\nname = "store"\n[tool.pytest.ini_options]\n',
};

let fixtures: Fixture[] = [];
afterEach(() => {
  for (const fixture of fixtures) fixture.cleanup();
  fixtures = [];
});

function fixture(files: Readonly<Record<string, string>> = FILES): Fixture {
  const made = makeRepo(files);
  fixtures.push(made);
  return made;
}

async function index(target: Fixture, dir = target.repoDir): Promise<IndexResult> {
  const built = await buildIndex({ dir, cacheDirFor: () => target.stateDir });
  if (built._tag === 'Left') throw new Error(`${built.left.reason}: ${built.left.message}`);
  return built.right;
}

const fileOf = (result: IndexResult, path: string): CapsuleFile => {
  const file = result.capsule.files.find((entry) => entry.path === path);
  if (file === undefined) throw new Error(`${path} not in the capsule`);
  return file;
};
const symbolsOf = (result: IndexResult, path: string) =>
  fileOf(result, path).symbols.map((s) => `${s.kind} ${s.name}@${s.line}${s.exported ? ' exported' : ''}`);

describe('capsule of a multi-language repository', () => {
  it('finds each symbol at its line, with its kind and whether it is exported', async () => {
    const result = await index(fixture());
    expect(symbolsOf(result, 'src/shape.ts')).toEqual([
      'interface Shape@3 exported',
      'type Id@7 exported',
      'class Square@9 exported',
      'method area@10',
      'function makeId@15 exported',
      'function helper@17',
    ]);
    expect(symbolsOf(result, 'py/store.py')).toEqual([
      'function load@4 exported',
      'class Store@8 exported',
      'method get@9',
      'function _hidden@13',
      'function decorated@18 exported', // the def line, not its decorator's
    ]);
    expect(symbolsOf(result, 'go/store.go')).toEqual([
      'struct Store@3 exported',
      'interface Getter@7 exported',
      'function New@11 exported',
      'method Get@15 exported',
    ]);
    expect(symbolsOf(result, 'rust/src/lib.rs')).toEqual([
      'struct Cache@3 exported',
      'method new@8 exported',
      'trait Fetch@13 exported',
      'method fetch@14',
      'function private_helper@17',
    ]);
    expect(fileOf(result, 'src/shape.ts').symbolSource).toBe('tree-sitter');
    // No grammar for Ruby: the plain-text fallback, and the file says so.
    expect(fileOf(result, 'lib/greeter.rb')).toMatchObject({ symbolSource: 'plain', language: 'ruby' });
    expect(symbolsOf(result, 'lib/greeter.rb')).toEqual(['class Greeter@1', 'function hello@2']);
  });

  it('sorts files by role and detects the stack and its commands', async () => {
    const { capsule } = await index(fixture());
    const roleOf = (path: string) => capsule.files.find((file) => file.path === path)?.role;
    expect([roleOf('src/shape.ts'), roleOf('test/shape.test.ts'), roleOf('README.md')]).toEqual([
      'source',
      'test',
      'docs',
    ]);
    expect([roleOf('.github/workflows/ci.yml'), roleOf('package.json'), roleOf('Cargo.toml')]).toEqual([
      'ci',
      'config',
      'config',
    ]);
    expect(capsule.stack.map((entry) => entry.ecosystem).sort()).toEqual(['go', 'node', 'python', 'rust']);
    expect(capsule.testCommands).toEqual(['cargo test', 'go test ./...', 'npm test', 'pytest']);
    expect(capsule.buildCommands).toEqual(['cargo build', 'go build ./...', 'npm run build']);
    expect(RepoCapsuleCodec.is(capsule)).toBe(true);
  });
});

describe('incremental re-index', () => {
  it('after one file changes, only that file is parsed; the rest comes from the cache', async () => {
    const target = fixture();
    const first = await index(target);
    expect(first.stats.parsed.length).toBeGreaterThanOrEqual(6);
    const unchanged = await index(target);
    expect(unchanged.stats.parsed).toEqual([]);
    target.write('py/store.py', `${PY}\n\ndef added():\n    pass\n`);
    git(target.repoDir, 'add', 'py/store.py');
    const again = await index(target);
    expect(again.stats.parsed).toEqual(['py/store.py']);
    // PY's 19 lines, two blank ones, then the new definition.
    expect(symbolsOf(again, 'py/store.py')).toContain('function added@22 exported');
    // Everything else is what the first build found.
    const others = (result: IndexResult) => result.capsule.files.filter((file) => file.path !== 'py/store.py');
    expect(others(again)).toEqual(others(first));
  });

  it('a new file with the text of an indexed one is not parsed again (keyed by blob, not path)', async () => {
    const target = fixture();
    await index(target);
    target.write('go/copy.go', GO);
    git(target.repoDir, 'add', 'go/copy.go');
    const again = await index(target);
    expect(again.stats.parsed).toEqual([]);
    expect(symbolsOf(again, 'go/copy.go')).toEqual(symbolsOf(again, 'go/store.go'));
  });

  it('a damaged cache is rebuilt, never trusted', async () => {
    const target = fixture();
    await index(target);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(target.stateDir, 'capsule.json'), '{"indexer":1,"capsule":{"files":"nope"}}');
    const again = await index(target);
    expect(again.stats.parsed.length).toBeGreaterThanOrEqual(6);
  });

  it('reports files whose work-tree text is not staged', async () => {
    const target = fixture();
    target.write('README.md', '# changed\n');
    expect((await index(target)).capsule.unstaged).toBe(1);
  });
});

describe('bad input is a typed error that says what to do', () => {
  it('not a git repository', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cc-index-plain-'));
    try {
      const built = await buildIndex({ dir, cacheDirFor: () => join(dir, '..', 'state-x') });
      expect(built._tag === 'Left' && built.left.reason).toBe('not-a-repository');
      expect(built._tag === 'Left' && built.left.hint).toMatch(/git init/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a directory that does not exist, or cannot be read', async () => {
    const target = fixture({ 'a.ts': 'export const a = 1;\n' });
    const missing = await buildIndex({ dir: join(target.base, 'nope'), cacheDirFor: () => target.stateDir });
    expect(missing._tag === 'Left' && missing.left.reason).toBe('unreadable-dir');
    if (process.getuid?.() !== 0) {
      chmodSync(target.repoDir, 0o000);
      const locked = await buildIndex({ dir: target.repoDir, cacheDirFor: () => target.stateDir });
      chmodSync(target.repoDir, 0o755);
      expect(locked._tag === 'Left' && locked.left.reason).toBe('unreadable-dir');
    }
  });

  it('a cache directory inside the work tree is refused (CONTROL: outside it is accepted)', async () => {
    const target = fixture({ 'a.ts': 'export const a = 1;\n' });
    for (const inside of ['.crustcore', 'sub/dir', '.']) {
      const built = await buildIndex({ dir: target.repoDir, cacheDirFor: () => join(target.repoDir, inside) });
      expect(built._tag === 'Left' && built.left.reason).toBe('cache-inside-worktree');
    }
    expect(existsSync(join(target.repoDir, '.crustcore'))).toBe(false);
    expect((await buildIndex({ dir: target.repoDir, cacheDirFor: () => target.stateDir }))._tag).toBe('Right');
  });
});

describe('capsule of this repository', () => {
  it('indexes CrustCore itself: its own symbols at their lines, its stack and commands', {
    timeout: 300_000,
  }, async () => {
    const root = resolve(import.meta.dirname, '../../..');
    const state = mkdtempSync(join(tmpdir(), 'cc-index-self-'));
    try {
      const built = await buildIndex({ dir: root, cacheDirFor: () => state });
      if (built._tag === 'Left') throw new Error(built.left.message);
      const { capsule } = built.right;
      const build = capsule.files.find((file) => file.path === 'packages/index/src/build.ts');
      const symbol = build?.symbols.find((s) => s.name === 'buildIndex');
      expect(symbol).toMatchObject({ kind: 'function', exported: true });
      // The line the capsule names is the line that defines it, in the staged text the capsule is built from.
      const lines = git(root, 'show', ':packages/index/src/build.ts').split('\n');
      expect(lines[(symbol?.line ?? 0) - 1]).toMatch(/^export async function buildIndex\(/);
      expect(capsule.stack.some((entry) => entry.ecosystem === 'node' && entry.manifest === 'package.json')).toBe(true);
      expect(capsule.testCommands).toContain('npm test');
      expect(capsule.roles.source).toBeGreaterThan(100);
      expect(capsule.roles.test).toBeGreaterThan(50);
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  });
});
