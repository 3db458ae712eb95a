/**
 * Path confinement cost (issue #5).
 * - resolveReadPath / resolveWritePath of a normal nested existing path:
 *   p50 (roadmap target < 100 µs; aim within 2× of a bare fs.realpathSync of
 *   the same path), against fs.realpathSync and fs.realpathSync.native.
 * - resolve + atomic verified write (without and with fsync), against a bare
 *   fs.writeFileSync of the same bytes, for scale.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsReadCap, FsWriteCap, resolveReadPath, resolveWritePath, WorktreeRoot, writeText } from '@crustcore/confine';
import { ratio, report, runCases } from './harness.js';

const base = mkdtempSync(join(tmpdir(), 'confine-bench-'));
const rootPath = join(base, 'root');
const nested = 'packages/app/src/components/widgets/button.ts';
mkdirSync(join(rootPath, 'packages/app/src/components/widgets'), { recursive: true });
writeFileSync(join(rootPath, nested), 'export const x = 1;\n');
const absolute = join(rootPath, nested);

function unwrap<A>(result: { _tag: 'Left'; left: unknown } | { _tag: 'Right'; right: A }): A {
  if (result._tag === 'Left') throw new Error(JSON.stringify(result.left));
  return result.right;
}

const root = unwrap(WorktreeRoot.open(rootPath));
const readCap = unwrap(FsReadCap.grant(root, 'bench'));
const writeCap = unwrap(FsWriteCap.grant(root, 'bench'));
const writePath = unwrap(resolveWritePath(writeCap, 'packages/app/src/components/widgets/out.ts'));
const content = 'export const y = 2;\n';

try {
  const rows = await runCases('path confinement of a nested existing path (6 components)', [
    { name: 'fs.realpathSync (baseline)', fn: () => realpathSync(absolute) },
    { name: 'fs.realpathSync.native', fn: () => realpathSync.native(absolute) },
    { name: 'resolveReadPath', fn: () => unwrap(resolveReadPath(readCap, nested)) },
    { name: 'resolveWritePath', fn: () => unwrap(resolveWritePath(writeCap, nested)) },
  ]);
  const [realpathJs, realpathNative, readResolve, writeResolve] = rows as [
    (typeof rows)[0],
    (typeof rows)[0],
    (typeof rows)[0],
    (typeof rows)[0],
  ];
  report('resolveReadPath p50', `${readResolve.perItemP50Us.toFixed(2)} µs`, '< 100 µs');
  report('resolveWritePath p50', `${writeResolve.perItemP50Us.toFixed(2)} µs`, '< 100 µs');
  ratio('resolveReadPath vs fs.realpathSync', readResolve, realpathJs, '≤ 2×');
  ratio('resolveWritePath vs fs.realpathSync', writeResolve, realpathJs, '≤ 2×');
  ratio('resolveReadPath vs fs.realpathSync.native', readResolve, realpathNative);
  ratio('resolveWritePath vs fs.realpathSync.native', writeResolve, realpathNative);

  const writes = await runCases(
    'verified atomic write of a small file',
    [
      { name: 'fs.writeFileSync (baseline)', fn: () => writeFileSync(writePath.absolute, content) },
      {
        name: 'writeText, durable: false',
        fn: () => unwrap(writeText(writeCap, writePath, content, { durable: false })),
      },
      { name: 'writeText (fsync file + dir)', fn: () => unwrap(writeText(writeCap, writePath, content)) },
    ],
    500,
  );
  const [bare, fast, durable] = writes as [(typeof writes)[0], (typeof writes)[0], (typeof writes)[0]];
  ratio('writeText (no fsync) vs fs.writeFileSync', fast, bare);
  ratio('writeText (fsync) vs fs.writeFileSync', durable, bare);
} finally {
  rmSync(base, { recursive: true, force: true });
}
