/**
 * The integrity checks of a patch, run on git's view of it (base tree,
 * resulting tree, blobs), never on the worker's files: the PATH_RULES table,
 * the CONTENT_RULES, symlink chains, runner-discovered tests and, when the
 * verify argv is known, what that argv reads first. Each check only adds
 * risks; the severity table decides which of them need a person.
 */
import {
  embeddedRepositories,
  type Finding,
  hooksPathFindings,
  packageJsonFindings,
  pythonConfigFindings,
} from './content-risks.js';
import { pathRulesFor } from './patch-kinds.js';
import { foldedName } from './path-fold.js';
import { mergeRisks, RISK_MEANING, type Risk, riskOf } from './risk.js';
import { escapingLinks } from './symlink-chain.js';
import { type DiscoveryConfig, discoveryFromConfigs, isDiscoveredTest, isDiscoveryConfig } from './test-discovery.js';
import type { TreeFile, TreeReader } from './tree-reader.js';
import { verifyProgramFiles, verifyScriptNames } from './verify-argv-risks.js';

/** The parts of a changed file these checks read (a structural subset of `ChangedFile`). */
export interface IntegrityFile {
  readonly status: 'A' | 'M' | 'D' | 'R' | 'T';
  readonly path: string;
  readonly oldPath: string | null;
  readonly newMode: string | null;
  readonly baseBlob: string | null;
  readonly newBlob: string | null;
}

export interface IntegrityInput {
  readonly reader: TreeReader;
  readonly baseCommit: string;
  readonly treeId: string;
  readonly files: readonly IntegrityFile[];
  /** The verify argv when known (at verify time); null during extraction. */
  readonly argv: readonly string[] | null;
}

const SYMLINK = '120000';
/** The detail of the fail-safe risk for a patched tree git could not read (yet). */
export const UNREAD_TREE = 'the patched tree could not be read to check the patch';
const MAX_CONFIG_READS = 64;

const findingsToRisks = (findings: readonly Finding[]): Risk[] =>
  findings.map((f) => riskOf(f.kind, f.detail, [f.path]));

/** Path-table risks: one per matching rule, with the rule's id in the detail so the approval says what it is. */
export function pathTableRisks(files: readonly IntegrityFile[]): Risk[] {
  const risks: Risk[] = [];
  for (const file of files) {
    for (const path of file.oldPath === null ? [file.path] : [file.oldPath, file.path]) {
      for (const rule of pathRulesFor(path))
        risks.push(riskOf(rule.risk, `${rule.id}: ${RISK_MEANING[rule.risk]}`, [path]));
    }
  }
  return mergeRisks(risks);
}

/** Existing tests (by every runner's discovery rules) that the patch edits, renames away or deletes. */
export function weakenedTests(files: readonly IntegrityFile[], discovery: DiscoveryConfig): Risk[] {
  const paths = files
    .filter((file) => file.status !== 'A')
    .map((file) => file.oldPath ?? file.path)
    .filter((path) => isDiscoveredTest(path, discovery));
  return paths.length === 0
    ? []
    : // A rename away from the runner's patterns deletes the test under its old path.
      [riskOf('tests-weakened', 'the patch edits or deletes existing test files', paths)];
}

async function linkTargets(reader: TreeReader, tree: readonly TreeFile[]): Promise<Map<string, string>> {
  const links = tree.filter((file) => file.mode === SYMLINK);
  const texts = await reader.readBlobs(links.map((link) => link.id));
  // An unreadable target is treated as absolute: the cautious answer.
  return new Map(links.map((link) => [link.path, texts.get(link.id) ?? '/']));
}

/** Links that leave the tree after the patch and did not before, or whose chain runs through a changed path. */
export function newlyEscaping(
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
  changed: ReadonlySet<string>,
): string[] {
  const was = escapingLinks(before);
  const out: string[] = [];
  for (const [path, via] of escapingLinks(after)) {
    const touched = changed.has(path) || via.some((hop) => changed.has(hop));
    if (touched || !was.has(path) || before.get(path) !== after.get(path)) out.push(path);
  }
  return out;
}

/** The git reads every check needs, started side by side (each is a process start) before any is awaited. */
interface Prefetched {
  readonly tree: Promise<readonly TreeFile[] | null>;
  readonly hooksPath: Promise<string | null>;
  readonly pointers: Promise<readonly string[] | null>;
}

const GITDIR_POINTER = '^[[:space:]]*gitdir:';

function prefetch(input: IntegrityInput): Prefetched {
  const present = input.files.filter((f) => f.status !== 'D').map((f) => f.path);
  const started = {
    tree: input.reader.listTree(input.treeId),
    hooksPath: input.reader.hooksPath(),
    pointers: input.reader.grepTree(input.treeId, GITDIR_POINTER, present),
  };
  // A read no check awaits (the base could not be listed) must not end the process when it fails;
  // a check that awaits one still sees its failure.
  for (const read of Object.values(started)) void read.catch(() => undefined);
  return started;
}

async function contentRisks(
  input: IntegrityInput,
  base: readonly TreeFile[],
  changed: ReadonlySet<string>,
  prefetched: Prefetched,
) {
  const { reader, files } = input;
  const findings: Finding[] = [];
  const scripts = input.argv === null ? [] : verifyScriptNames(input.argv);
  let reads = 0;
  for (const file of files) {
    const name = foldedName(file.path);
    const isPackage = name === 'package.json';
    const isPython = name === 'pyproject.toml' || name === 'setup.cfg' || name === 'tox.ini';
    if (!isPackage && !isPython) continue;
    reads += 1;
    if (reads > MAX_CONFIG_READS) {
      // Fail safe: the ones past the bound were not compared.
      const detail = `more than ${MAX_CONFIG_READS} package or Python config files changed; the rest were not compared`;
      findings.push({ kind: 'verify-command-changed', detail, path: file.path });
      break;
    }
    const before = file.baseBlob === null ? null : await reader.readBlob(file.baseBlob);
    const after = file.newBlob === null || file.status === 'D' ? null : await reader.readBlob(file.newBlob);
    // null means "absent" to the comparisons below: a blob that exists but could not be read (over
    // the read bound, or not found) is "cannot tell", which needs a person.
    if (
      (file.baseBlob !== null && before === null) ||
      (file.newBlob !== null && file.status !== 'D' && after === null)
    ) {
      const detail = `${file.path} could not be read to compare (larger than the read bound, or missing)`;
      findings.push({ kind: 'verify-command-changed', detail, path: file.path });
      continue;
    }
    if (isPackage) findings.push(...packageJsonFindings(file.path, before, after, scripts));
    else findings.push(...pythonConfigFindings(file.path, before, after));
  }
  findings.push(...hooksPathFindings(await prefetched.hooksPath, changed));
  const tree = await prefetched.tree;
  if (tree !== null)
    findings.push(
      ...embeddedRepositories(
        tree.map((f) => f.path),
        changed,
      ),
    );
  const pointers = await prefetched.pointers;
  for (const path of pointers ?? []) {
    if (changed.has(path))
      findings.push({ kind: 'embedded-git-repository', detail: `${path} is a gitdir pointer`, path });
  }
  const risks = findingsToRisks(findings);
  if (tree === null || pointers === null) {
    // Fail safe: without the patched tree the link, embedded-repository and pointer checks cannot run.
    risks.push(riskOf('verify-command-changed', UNREAD_TREE, []));
  }
  if (tree !== null) {
    const escaping = newlyEscaping(await linkTargets(reader, base), await linkTargets(reader, tree), changed);
    if (escaping.length > 0) risks.push(riskOf('symlink-outside', RISK_MEANING['symlink-outside'], escaping));
  }
  return risks;
}

async function discoveryOf(reader: TreeReader, base: readonly TreeFile[]): Promise<DiscoveryConfig> {
  const texts = new Map<string, string>();
  for (const file of base.filter((f) => isDiscoveryConfig(f.path)).slice(0, MAX_CONFIG_READS)) {
    const text = await reader.readBlob(file.id);
    if (text !== null) texts.set(file.path, text);
  }
  return discoveryFromConfigs(texts);
}

function argvRisks(argv: readonly string[], files: readonly IntegrityFile[]): Risk[] {
  const paths = files.flatMap((file) => (file.oldPath === null ? [file.path] : [file.oldPath, file.path]));
  const hits = verifyProgramFiles(argv, paths);
  return [...hits].map(([path, why]) => riskOf('verify-command-changed', why, [path]));
}

/** Every integrity risk of the patch. A tree git cannot list makes the checks that need it fail safe. */
export async function integrityRisks(input: IntegrityInput): Promise<Risk[]> {
  const changed = new Set(input.files.flatMap((f) => (f.oldPath === null ? [f.path] : [f.oldPath, f.path])));
  const reads = prefetch(input);
  const base = await input.reader.listTree(input.baseCommit);
  const risks: Risk[] = [...pathTableRisks(input.files)];
  if (base === null) {
    risks.push(riskOf('verify-command-changed', 'the base tree could not be listed to check the patch', []));
  } else {
    risks.push(...weakenedTests(input.files, await discoveryOf(input.reader, base)));
    risks.push(...(await contentRisks(input, base, changed, reads)));
  }
  if (input.argv !== null) risks.push(...argvRisks(input.argv, input.files));
  return mergeRisks(risks);
}
