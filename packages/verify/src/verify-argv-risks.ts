/**
 * What the verify argv itself reads first, so a patch that edits it changes
 * the meaning of "verify passed": the script the argv names (`node t.mjs`,
 * `./run-tests.sh`, `python -m mypkg.tests`), the file its program reads for
 * instructions (`make` → Makefile, `tox` → tox.ini, `tsc` → tsconfig, `go` →
 * go.mod, `cargo` → Cargo.toml, …), the package.json script it names, and a
 * top-level module shadowing a `python -m` module. Pure.
 */
import { foldPath } from './path-fold.js';

/** Files a program reads as its instructions; matched on the folded file name, any depth. */
const PROGRAM_FILES: Readonly<Record<string, RegExp>> = {
  make: /^(?:gnumakefile|makefile|.+\.mk)$/,
  gmake: /^(?:gnumakefile|makefile|.+\.mk)$/,
  just: /^\.?justfile$/,
  task: /^taskfile(?:\.dist)?\.ya?ml$/,
  tox: /^(?:tox\.ini|pyproject\.toml|setup\.cfg)$/,
  nox: /^noxfile\.py$/,
  rake: /^rakefile(?:\.rb)?$/,
  tsc: /^(?:tsconfig.*\.json|jsconfig.*\.json)$/,
  'vue-tsc': /^(?:tsconfig.*\.json|jsconfig.*\.json)$/,
  go: /^(?:go\.mod|go\.work)$/,
  cargo: /^(?:cargo\.toml|build\.rs|rust-toolchain(?:\.toml)?)$/,
  deno: /^deno\.jsonc?$/,
  gradle: /^(?:build|settings)\.gradle(?:\.kts)?$/,
  mvn: /^pom\.xml$/,
  hatch: /^(?:pyproject\.toml|hatch\.toml)$/,
};

const PACKAGE_RUNNERS = new Set(['npm', 'pnpm', 'yarn', 'bun']);
const programName = (word: string): string => word.slice(word.lastIndexOf('/') + 1);

/** Script names `npm run x` / `pnpm x` / `yarn x` / `bun run x` would run. */
export function verifyScriptNames(argv: readonly string[]): string[] {
  const [program, ...rest] = argv;
  if (program === undefined || !PACKAGE_RUNNERS.has(programName(program))) return [];
  const words = rest.filter((word) => !word.startsWith('-'));
  const [first, second] = words;
  if (first === undefined) return [];
  if (first === 'run' || first === 'run-script') return second === undefined ? [] : [second];
  if (first === 'test' || first === 't' || first === 'tst') return ['test'];
  // `pnpm x` / `yarn x` / `bun x`-style shorthand runs the script x when one exists.
  return programName(program) === 'npm' ? [] : [first];
}

const cleanRelative = (word: string): string | null => {
  const stripped = word.replace(/^\.\//, '');
  if (stripped === '' || stripped.startsWith('/') || stripped.startsWith('-')) return null;
  return foldPath(stripped).join('/');
};

/** Changed paths the verify argv reads first; each with why. */
export function verifyProgramFiles(argv: readonly string[], changedPaths: readonly string[]): Map<string, string> {
  const hits = new Map<string, string>();
  const folded = new Map(changedPaths.map((path) => [foldPath(path).join('/'), path]));
  const programs = argv.map(programName);
  // Words naming files (the script, a config passed by flag): any argv word equal to a changed path.
  for (const word of argv) {
    for (const candidate of [word, word.includes('=') ? word.slice(word.indexOf('=') + 1) : word]) {
      const key = cleanRelative(candidate);
      const path = key === null ? undefined : folded.get(key);
      if (path !== undefined) hits.set(path, `the verify argv names ${path}`);
    }
  }
  for (const [key, path] of folded) {
    const name = key.split('/').pop() ?? '';
    for (const program of programs) {
      const files = PROGRAM_FILES[program];
      if (files?.test(name) === true) hits.set(path, `${program} reads ${path}`);
    }
  }
  // `python -m mod.sub`: the module (and a same-named top-level file, first on sys.path) is the program.
  argv.forEach((word, index) => {
    if (word !== '-m' || index === 0) return;
    const module = argv[index + 1];
    if (module === undefined) return;
    const asPath = foldPath(module.replace(/\./g, '/')).join('/');
    const top = asPath.split('/')[0] ?? '';
    for (const [key, path] of folded) {
      if (key === `${asPath}.py` || key.startsWith(`${asPath}/`) || key === `${top}.py` || key.startsWith(`${top}/`))
        hits.set(path, `python -m ${module} imports ${path}`);
    }
  });
  return hits;
}
