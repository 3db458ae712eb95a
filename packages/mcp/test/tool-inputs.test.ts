import { parseUnifiedDiff } from '@crustcore/confine';
import { describe, expect, it } from 'vitest';
import { FROZEN_TOOLS, MCP_LIMITS, renderFilePatch, ToolInputCodecs, ToolShapes } from '../src/index.js';

describe('the frozen tool set', () => {
  it('has one codec and one zod shape per tool, and nothing else', () => {
    expect([...FROZEN_TOOLS].sort()).toEqual([
      'apply',
      'approve',
      'create_task',
      'diff',
      'export',
      'stage_diff',
      'status',
      'verify',
    ]);
    expect(Object.keys(ToolInputCodecs).sort()).toEqual([...FROZEN_TOOLS].sort());
    expect(Object.keys(ToolShapes).sort()).toEqual([...FROZEN_TOOLS].sort());
  });

  it('io-ts enforces the bounds and names them', () => {
    const big = ToolInputCodecs.stage_diff.decode({ task_id: 't_a', diff: 'x'.repeat(MCP_LIMITS.maxDiffBytes + 1) });
    expect(big._tag).toBe('Left');
    if (big._tag === 'Left') expect(big.left.map((e) => e.message).join(' ')).toMatch(/limit is 4194304 bytes/);
    expect(ToolInputCodecs.verify.decode({ task_id: '../t' })._tag).toBe('Left');
    expect(ToolInputCodecs.approve.decode({ task_id: 't_a', token: '' })._tag).toBe('Left');
    expect(ToolInputCodecs.create_task.decode({ goal: 'g', dir: 'a\u0000b' })._tag).toBe('Left');
    expect(ToolInputCodecs.status.decode({})._tag).toBe('Right');
  });
});

describe('per-file diff text', () => {
  it('re-renders a file section that parses back to the same hunks, markers included', () => {
    const diff = [
      '--- a/x.txt',
      '+++ b/x.txt',
      '@@ -1,2 +1,2 @@',
      ' keep',
      '-old',
      '\\ No newline at end of file',
      '+new',
      '\\ No newline at end of file',
      '--- /dev/null',
      '+++ b/y.txt',
      '@@ -0,0 +1 @@',
      '+created',
      '',
    ].join('\n');
    const parsed = parseUnifiedDiff(diff);
    if (parsed._tag === 'Left') throw new Error(parsed.left.message);
    for (const patch of parsed.right) {
      const path = patch.newPath ?? patch.oldPath ?? '';
      const again = parseUnifiedDiff(renderFilePatch(path, patch));
      if (again._tag === 'Left') throw new Error(again.left.message);
      expect(again.right[0]?.hunks).toEqual(patch.hunks);
      expect(again.right[0]?.kind).toBe(patch.kind);
    }
  });
});
