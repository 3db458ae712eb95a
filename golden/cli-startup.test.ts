/**
 * Start-up loads nothing it does not need (issue #17): `--help`, `--version`,
 * `help <command>`, every `<command> --help` and a mistyped name are answered
 * from the CLI's own files and the terminal guard (@crustcore/safe-text) alone
 * — no command module, no verifier, runtime or pack. Both entries: the bin
 * (crustcore.cjs, one CommonJS file; its bundle may hold nothing but the CLI's
 * start-up code and safe-text) and the ES module CLI (crustcore.js, whose
 * lazy command table must load no command to answer). Every module the
 * process resolves is recorded by an ES module hook (registered with --import)
 * and a CommonJS one (Module._resolveFilename, with --require), so a package
 * pulled in at start-up would show. Controls: the same hooks see the verifier
 * load when `gc` runs and the daemon client when `status` runs, through the bin.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCli, CLI, CLI_ESM, cliEnv, makeRepo, mapBounded, REPO_ROOT, type Sandbox } from './cli-harness.js';

let box: Sandbox;
beforeAll(() => {
  buildCli();
  box = makeRepo({ 'a.txt': 'a\n' });
}, 60_000);

const HOOKS = `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (resolved.url.startsWith('file:')) appendFileSync(process.env.LOAD_TRACE, resolved.url + '\\n');
  return resolved;
}`;
const REGISTER = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});`;
const REQUIRE_HOOK = `
const Module = require('node:module');
const { appendFileSync } = require('node:fs');
const { pathToFileURL } = require('node:url');
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (...args) {
  const path = resolveFilename.apply(this, args);
  if (path.startsWith('/')) appendFileSync(process.env.LOAD_TRACE, pathToFileURL(path).href + '\\n');
  return path;
};`;

interface Traced {
  readonly status: number | null;
  readonly stdout: string;
  /** Every file the process loaded, relative to the repository. */
  readonly loaded: readonly string[];
}

async function traced(args: readonly string[], entry = CLI, extraEnv: Record<string, string> = {}): Promise<Traced> {
  const dir = mkdtempSync(join(box.root, 'trace-'));
  const trace = join(dir, 'loads.txt');
  writeFileSync(trace, '');
  const requireHook = join(dir, 'require-hook.cjs');
  writeFileSync(requireHook, REQUIRE_HOOK);
  const esmHook = `data:text/javascript,${encodeURIComponent(REGISTER)}`;
  const argv = ['--require', requireHook, '--import', esmHook, entry, ...args];
  const env = cliEnv(box, extraEnv);
  const { status, stdout } = await new Promise<{ status: number | null; stdout: string }>((done) => {
    const child = execFile(
      process.execPath,
      argv,
      { cwd: box.repo, encoding: 'utf8', env: { ...env, LOAD_TRACE: trace }, timeout: 120_000 },
      (_error, out) => done({ status: child.exitCode, stdout: out }),
    );
    child.stdin?.end();
  });
  const loaded = readFileSync(trace, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((url) => relative(REPO_ROOT, new URL(url).pathname))
    .filter((path) => path !== relative(REPO_ROOT, requireHook));
  return { status, stdout, loaded: [...new Set(loaded)] };
}

/**
 * The packages whose code a loaded file carries: its own package, or for a file of the ES module
 * build (where every @crustcore package is bundled into chunks) the packages of the esbuild inputs
 * it was made from — so a chunk holding the verifier counts as loading the verifier.
 */
function packagesCarried(path: string): string[] {
  const own = /^packages\/([\w-]+)\/dist\//.exec(path)?.[1];
  if (own !== 'crustcore') return [own ?? path];
  const output = bundleMeta(path).outputs[path.slice('packages/crustcore/'.length)];
  if (output === undefined) return path.endsWith('.cjs') ? [] : [path];
  const names = Object.keys(output.inputs).map((input) => {
    if (input.startsWith('src/')) return null;
    const inPackages = /^\.\.\/([\w-]+)\//.exec(input);
    if (inPackages !== null) return inPackages[1] as string;
    return /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1] ?? input;
  });
  return [...new Set(names.filter((name): name is string => name !== null))];
}
type Meta = { outputs: Record<string, { inputs: Record<string, unknown> }> };
const metas = new Map<string, Meta>();
/** The metafile of the build that wrote `path`: the CLI bundle's own (cli-meta.json), or the ES module build's. */
const bundleMeta = (path: string): Meta => {
  const file = path.endsWith('/crustcore-cli.cjs') ? 'cli-meta.json' : 'esm-meta.json';
  const known =
    metas.get(file) ?? (JSON.parse(readFileSync(join(REPO_ROOT, 'packages/crustcore/dist', file), 'utf8')) as Meta);
  metas.set(file, known);
  return known;
};

/** What start-up may load: the CLI's entry and chunks, carrying no package code but the terminal guard. */
const allowedAtStartUp = (path: string): boolean =>
  (path.startsWith('packages/crustcore/dist/') || path === 'packages/safe-text/dist/index.js') &&
  packagesCarried(path).every((name) => name === 'safe-text');
const carries = (loaded: readonly string[], name: string): boolean =>
  loaded.some((path) => packagesCarried(path).includes(name));

const NO_COMMAND_MODULE =
  /\/chunks\/(demo|run|inspect|export|diff|recover|gc|doctor|chat|secret|config|models|daemon|status|tasks|control|mcp)(-[A-Z0-9]{8})?\.js$/;

const ENTRIES = [
  ['the bin (crustcore.cjs)', CLI],
  ['the ES module CLI (crustcore.js)', CLI_ESM],
] as const;

describe.each(ENTRIES)('start-up of %s loads only its own files and the terminal guard', (_label, entry) => {
  it('--help, --version, -v, help <command>, no arguments and a mistyped name', async () => {
    const cases = [['--help'], ['--version'], ['-v'], ['help', 'run'], ['rnu'], []];
    for (const [args, run] of await mapBounded(cases, 2, async (args) => [args, await traced(args, entry)] as const)) {
      expect(run.status, args.join(' ')).toBe(args[0] === 'rnu' ? 2 : 0);
      // The hooks saw the entry itself load: the trace is live for this entry's kind of module.
      expect(run.loaded, args.join(' ')).toContain(relative(REPO_ROOT, entry));
      expect(
        run.loaded.filter((p) => !allowedAtStartUp(p) || NO_COMMAND_MODULE.test(p)),
        args.join(' '),
      ).toEqual([]);
    }
  });

  it('every command answering --help loads neither its module nor a package', async () => {
    const names = [...(await traced(['--help'], entry)).stdout.matchAll(/^ {2}(\S+) {2,}/gm)].map(
      (m) => m[1] as string,
    );
    expect(names.length).toBeGreaterThan(10);
    const runs = await mapBounded(names, 2, async (name) => [name, await traced([name, '--help'], entry)] as const);
    for (const [name, run] of runs) {
      expect(run.status, name).toBe(0);
      expect(run.stdout, name).toContain(`Usage: crustcore ${name}`);
      expect(
        run.loaded.filter((p) => !allowedAtStartUp(p) || NO_COMMAND_MODULE.test(p)),
        name,
      ).toEqual([]);
    }
  }, 600_000);
});

describe('what start-up carries', () => {
  it('the bin bundles only the CLI start-up code and safe-text (esbuild metafile of crustcore.cjs)', () => {
    const meta = JSON.parse(readFileSync(join(REPO_ROOT, 'packages/crustcore/dist/bin-meta.json'), 'utf8')) as {
      inputs: Record<string, unknown>;
    };
    const inputs = Object.keys(meta.inputs);
    expect(inputs).toContain('src/fast-start.ts');
    expect(
      inputs.filter((p) => !/^(src\/(cli|commands)\/[\w-]+\.ts|src\/[\w-]+\.ts|\.\.\/safe-text\/.+)$/.test(p)),
    ).toEqual([]);
    expect(inputs.filter((p) => /^src\/commands\//.test(p) && !/\/(pack-)?specs\.ts$/.test(p))).toEqual([]);
    expect(inputs.filter((p) => /^src\/[\w-]+\.ts$/.test(p)).sort()).toEqual(['src/fast-start.ts', 'src/help.ts']);
  });

  it('the ES module CLI answers start-up with safe-text loaded (the hook and the metafile see bundled packages)', async () => {
    expect(carries((await traced(['--help'], CLI_ESM)).loaded, 'safe-text')).toBe(true);
  });

  it('control: through the bin, the hooks see what a running command loads (gc: the verifier; status: the daemon client)', async () => {
    // The bin starts the CLI bundle, which carries every package; without the code cache, the ES module CLI's chunks.
    const gc = await traced(['gc', '--json']);
    expect(gc.status).toBe(0);
    expect(gc.loaded).toContain('packages/crustcore/dist/crustcore-cli.cjs');
    expect(carries(gc.loaded, 'verify')).toBe(true);
    expect(gc.loaded.filter((p) => !allowedAtStartUp(p)).length).toBeGreaterThan(0);
    const esm = await traced(['gc', '--json'], CLI, { CRUSTCORE_CODE_CACHE: '0' });
    expect(esm.status).toBe(0);
    expect(carries(esm.loaded, 'verify')).toBe(true);
    expect(esm.loaded.some((p) => /\/chunks\/gc-[A-Z0-9]{8}\.js$/.test(p))).toBe(true);
    expect(esm.loaded).not.toContain('packages/crustcore/dist/crustcore-cli.cjs');
    const status = await traced(['status', '--json'], CLI, { CRUSTCORE_CODE_CACHE: '0' });
    expect(carries(status.loaded, 'daemon')).toBe(true);
  });
});
