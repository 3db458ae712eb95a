/**
 * Symlinks judged by where they resolve in the resulting tree, not by one
 * link's target text. Each attack builds a chain whose links each look
 * harmless alone. CONTROL: after plain `git apply` of the same patch bytes,
 * the kernel really resolves the link outside the tree (realpath).
 */
import { realpathSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { needsApproval, symlinkEscapes } from '../packages/verify/src/index.js';
import { NODE_PROJECT } from '../packages/verify/test/git-fixture.js';
import {
  applyWithoutCrustCore,
  cleanupFixtures,
  type Plant,
  plantPatch,
  riskKinds,
  verifyPlanted,
} from './patch-harness.js';

afterEach(cleanupFixtures);

const FIX: Plant = { file: 'src/math.js', text: 'export const add = (a, b) => a + b;\n' };
const BASE = { ...NODE_PROJECT, 'lib/inner/keep.txt': 'k\n', 'sub/deep/keep.txt': 'k\n' };

/** CONTROL: where the kernel resolves `link` in a clone with the patch applied, relative to the clone root. */
function resolvedOutside(clone: string, link: string): boolean {
  // The kernel's own answer (realpath(3)). Node's JS `realpathSync` is not: it applies `..` lexically
  // after a link (`c -> a/b/..` comes out as `a`), the very mistake this suite is about.
  const real = realpathSync.native(join(clone, link));
  const rel = relative(realpathSync.native(clone), real);
  return rel.startsWith('..') || rel.startsWith('/');
}

const CHAINS: readonly (readonly [string, readonly Plant[], string])[] = [
  [
    '`..` after a link (a/b -> .., c -> a/b/..)',
    [
      { link: 'a/b', target: '..' },
      { link: 'c', target: 'a/b/..' },
    ],
    'c',
  ],
  [
    'links through links, all added by the patch',
    [
      { link: 'x', target: 'y' },
      { link: 'y', target: 'z' },
      { link: 'z', target: 'sub/deep/../../..' },
    ],
    'x',
  ],
  ['an absolute target', [{ link: 'etc-link', target: '/etc' }], 'etc-link'],
  ['a link that replaces a directory', [{ remove: 'lib' }, { link: 'lib', target: 'sub/../..' }], 'lib'],
  [
    'a deep link climbing through a sibling link',
    [
      { link: 'sub/deep/up', target: '../..' },
      { link: 'sub/hop', target: 'deep/up/..' },
    ],
    'sub/hop',
  ],
];

describe('symlink chains that leave the tree', () => {
  it.each(CHAINS)('%s', async (_what, steps, link) => {
    const planted = await plantPatch(BASE, [FIX, ...steps]);
    const risk = planted.patch.risks.find((r) => r.kind === 'symlink-outside');
    expect(risk?.paths, JSON.stringify(planted.patch.risks)).toContain(link);
    expect(needsApproval(planted.patch.risks)).toBe(true);
    expect(resolvedOutside(applyWithoutCrustCore(planted), link)).toBe(true); // CONTROL
  });

  it('each link of the first chain alone looks inside: the one-link check would have missed it', () => {
    expect(symlinkEscapes('a/b', '..')).toBe(false);
    expect(symlinkEscapes('c', 'a/b/..')).toBe(false);
  });

  it('a patch that retargets a link the base already had makes an old link escape', async () => {
    const planted = await plantPatch(BASE, [FIX, { link: 'hop', target: '..' }], {
      baseSteps: [
        { link: 'hop', target: 'sub' },
        { link: 'old', target: 'hop/..' },
      ],
    });
    const risk = planted.patch.risks.find((r) => r.kind === 'symlink-outside');
    expect(risk?.paths).toEqual(expect.arrayContaining(['hop', 'old']));
    expect(resolvedOutside(applyWithoutCrustCore(planted), 'old')).toBe(true); // CONTROL
  });

  it('links that stay inside, however they get there, are not flagged', async () => {
    const planted = await plantPatch(BASE, [
      FIX,
      { link: 's', target: 'sub/deep' },
      { link: 't', target: 's/../..' }, // lexically `..`, really the tree root
      { link: 'u', target: 'lib/inner/keep.txt' },
    ]);
    expect(riskKinds(planted.patch.risks)).not.toContain('symlink-outside');
    expect(resolvedOutside(applyWithoutCrustCore(planted), 't')).toBe(false);
  });

  it('the verifier re-checks the chain on its own fresh worktree', async () => {
    const planted = await plantPatch(BASE, [FIX, ...(CHAINS[0]?.[1] ?? [])]);
    // Name the test file: a bare `node --test` would walk through `c` into the directory above.
    const outcome = await verifyPlanted(planted, ['node', '--test', 'test/math.test.js']);
    expect(outcome._tag, JSON.stringify(outcome).slice(0, 2000)).toBe('Verified');
    if (outcome._tag === 'Verified') expect(riskKinds(outcome.verified.risks)).toContain('symlink-outside');
  });
});
