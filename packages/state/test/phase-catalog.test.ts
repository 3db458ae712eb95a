/**
 * The state plane keeps its own copy of the task phase graph in SQL
 * (`crust_phases`, `crust_phase_edges` and the trigger on `crust_tasks`), as
 * defence in depth: raw SQL cannot move a task along an edge the kernel does
 * not have. The kernel's transition table is the authority; this test pins
 * the database's catalog to it (the set the kernel implies, `phaseEdges()`),
 * and proves the trigger refuses every pair outside it.
 */
import { PHASES, type Phase, phaseEdges, phaseOf, TERMINAL_STATUSES } from '@crustcore/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTask, type Db } from '../src/index.js';
import { refusedBySql, right, taskId } from './assertions.js';
import { openMigrated, PgliteHarness } from './engines.js';

const engine = new PgliteHarness();
let db: Db;

beforeAll(async () => {
  await engine.setup();
  db = await openMigrated(engine, 'phase_catalog');
});
afterAll(() => engine.teardown());

const key = (from: string, to: string): string => `${from} -> ${to}`;
const kernelEdges = new Set(phaseEdges().map(([from, to]) => key(from, to)));

/** A shortest walk along the kernel's edges from INIT to `target`. */
function walkTo(target: Phase): Phase[] {
  const previous = new Map<Phase, Phase>();
  const queue: Phase[] = ['INIT'];
  while (queue.length > 0) {
    const at = queue.shift() as Phase;
    if (at === target) break;
    for (const [from, to] of phaseEdges()) {
      if (from === at && to !== 'INIT' && !previous.has(to)) {
        previous.set(to, at);
        queue.push(to);
      }
    }
  }
  const path: Phase[] = [];
  for (let p: Phase | undefined = target; p !== undefined && p !== 'INIT'; p = previous.get(p)) path.unshift(p);
  return path;
}

describe('the SQL phase catalog is the kernel transition table', () => {
  it('has the same phases, with the same ones terminal', async () => {
    const rows = await db.query<{ name: string; terminal: boolean }>('SELECT name, terminal FROM crust_phases');
    expect(rows.rows.map((r) => r.name).sort()).toEqual([...PHASES].sort());
    const terminal = new Set([...TERMINAL_STATUSES].map((s) => phaseOf(s)));
    for (const row of rows.rows) expect(row.terminal, row.name).toBe(terminal.has(row.name as Phase));
  });

  it('has exactly the phase edges the kernel statuses imply', async () => {
    const rows = await db.query<{ from_phase: string; to_phase: string }>(
      'SELECT from_phase, to_phase FROM crust_phase_edges',
    );
    expect(rows.rows.map((r) => key(r.from_phase, r.to_phase)).sort()).toEqual([...kernelEdges].sort());
    // Not vacuous: the kernel's graph has its forward path, its revisit and its aborts.
    expect(kernelEdges).toContain('VERIFY -> IMPLEMENT');
    expect(kernelEdges.size).toBeGreaterThan(8);
  });

  it('the trigger refuses every phase move the kernel has no edge for, even as raw SQL', async () => {
    let refused = 0;
    let allowed = 0;
    // APPROVAL_GATE and COMMITTED are entered only with a passing verification of staged content
    // (migration 4's guard), so raw walks start from the phases before them; their own edges are
    // pinned by the catalog comparison above.
    const reachable = PHASES.filter((p) => p !== 'APPROVAL_GATE' && p !== 'COMMITTED');
    for (const from of reachable) {
      for (const to of PHASES) {
        if (from === to) continue;
        const id = taskId();
        right(await createTask(db, { id, title: `${from} to ${to}` }));
        for (const step of walkTo(from)) {
          await db.query('UPDATE crust_tasks SET phase = $2::text WHERE id = $1::text', [id, step]);
        }
        const move = ['UPDATE crust_tasks SET phase = $2::text WHERE id = $1::text', [id, to]] as const;
        if (kernelEdges.has(key(from, to))) {
          // A catalog edge passes the phase trigger (it may still meet the staging guard: ZC0xx other than ZC001).
          const code = await db.query(move[0], [...move[1]]).then(
            () => null,
            (error: unknown) => (error as { code?: string }).code ?? 'unknown',
          );
          expect(code, key(from, to)).not.toBe('ZC001');
          allowed++;
        } else {
          await refusedBySql(db, move[0], [...move[1]], 'ZC001');
          refused++;
        }
      }
    }
    const fromReachable = [...kernelEdges].filter((e) => reachable.some((p) => e.startsWith(`${p} ->`)));
    expect(allowed).toBe(fromReachable.length);
    expect(refused).toBe(reachable.length * (PHASES.length - 1) - fromReachable.length);
    expect(refused).toBeGreaterThan(15);
  });
});
