import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createTask,
  type Db,
  getTask,
  phaseCatalog,
  recordVerificationRun,
  stagedContentHash,
  TASK_PHASES,
  type TaskPhase,
  taskPhaseHistory,
  transitionTask,
} from '../src/index.js';
import { left, refusedBySql, right, taskId } from './assertions.js';
import { newTaskIn } from './drive.js';
import { type EngineHarness, openMigrated } from './engines.js';

/** The catalog as designed (issue 8): the database must hold exactly this. */
const DESIGNED_EDGES: ReadonlyArray<readonly [TaskPhase, TaskPhase]> = [
  ['INIT', 'PLAN'],
  ['PLAN', 'IMPLEMENT'],
  ['IMPLEMENT', 'VERIFY'],
  ['VERIFY', 'APPROVAL_GATE'],
  ['APPROVAL_GATE', 'COMMITTED'],
  ['VERIFY', 'IMPLEMENT'],
  ['INIT', 'ABORTED'],
  ['PLAN', 'ABORTED'],
  ['IMPLEMENT', 'ABORTED'],
  ['VERIFY', 'ABORTED'],
  ['APPROVAL_GATE', 'ABORTED'],
];
const isEdge = (from: TaskPhase, to: TaskPhase): boolean =>
  DESIGNED_EDGES.some(([edgeFrom, edgeTo]) => edgeFrom === from && edgeTo === to);

export function taskSuite(engine: EngineHarness): void {
  describe(`task phases (${engine.name})`, () => {
    let db: Db;
    beforeAll(async () => {
      db = await openMigrated(engine, 'tasks');
    });

    it('holds exactly the designed transition catalog', async () => {
      const catalog = (await phaseCatalog(db)).map((edge) => `${edge.from}->${edge.to}`).sort();
      expect(catalog).toEqual(DESIGNED_EDGES.map(([from, to]) => `${from}->${to}`).sort());
    });

    it('rejects every illegal transition, through the API and through raw SQL', async () => {
      let rejected = 0;
      for (const from of TASK_PHASES) {
        const id = await newTaskIn(db, from);
        const before = await taskPhaseHistory(db, id);
        left(await transitionTask(db, id, from), 'IllegalTransition');
        for (const to of TASK_PHASES) {
          if (to === from || isEdge(from, to)) continue;
          const refused = left(await transitionTask(db, id, to), 'IllegalTransition');
          expect(refused).toEqual({ _tag: 'IllegalTransition', taskId: id, from, to });
          await refusedBySql(db, 'UPDATE crust_tasks SET phase = $2::text WHERE id = $1::text', [id, to], 'ZC001');
          rejected += 1;
        }
        expect((await getTask(db, id))?.phase).toBe(from);
        expect(await taskPhaseHistory(db, id)).toEqual(before);
      }
      // 7 phases × 6 targets − 11 legal edges.
      expect(rejected).toBe(42 - DESIGNED_EDGES.length);
    });

    it('accepts every legal edge and records the history', async () => {
      for (const [from, to] of DESIGNED_EDGES) {
        const id = await newTaskIn(db, from);
        if (from === 'VERIFY' && to === 'APPROVAL_GATE') {
          await recordVerificationRun(db, {
            taskId: id,
            stagedHash: await stagedContentHash(db, id),
            argv: ['npm', 'test'],
            sandboxProfile: 'bwrap-default',
            exitCode: 0,
            durationMs: 1,
          });
        }
        const moved = right(await transitionTask(db, id, to));
        expect(moved.phase).toBe(to);
        const history = await taskPhaseHistory(db, id);
        expect(history[0]).toMatchObject({ phaseSeq: 0, from: null, to: 'INIT' });
        expect(history.at(-1)).toMatchObject({ phaseSeq: moved.phaseSeq, from, to });
      }
    });

    it('enforces the revisit budget in the database', async () => {
      const id = await newTaskIn(db, 'VERIFY', 2);
      right(await transitionTask(db, id, 'IMPLEMENT'));
      right(await transitionTask(db, id, 'VERIFY'));
      expect(right(await transitionTask(db, id, 'IMPLEMENT')).revisits).toBe(2);
      right(await transitionTask(db, id, 'VERIFY'));
      expect(left(await transitionTask(db, id, 'IMPLEMENT'), 'RevisitBudgetExhausted')).toMatchObject({
        revisits: 2,
        maxRevisits: 2,
      });
      await refusedBySql(db, `UPDATE crust_tasks SET phase = 'IMPLEMENT' WHERE id = $1::text`, [id], 'ZC002');
      // Nor can the counter or the budget be reset around the trigger.
      await refusedBySql(db, 'UPDATE crust_tasks SET revisits = 0 WHERE id = $1::text', [id], 'ZC006');
      await refusedBySql(db, 'UPDATE crust_tasks SET max_revisits = 50 WHERE id = $1::text', [id], 'ZC006');
      right(await transitionTask(db, id, 'ABORTED'));
    });

    it('creates tasks in INIT only and keeps the catalog read-only', async () => {
      await refusedBySql(db, `INSERT INTO crust_tasks (id, phase) VALUES ($1::text, 'COMMITTED')`, [taskId()], 'ZC001');
      await refusedBySql(db, `INSERT INTO crust_phase_edges VALUES ('INIT', 'COMMITTED')`, [], 'ZC011');
      await refusedBySql(db, 'DELETE FROM crust_phase_edges', [], 'ZC011');
      await refusedBySql(db, `UPDATE crust_phases SET terminal = false`, [], 'ZC011');
      const id = taskId();
      right(await createTask(db, { id }));
      left(await createTask(db, { id }), 'AlreadyExists');
      left(await createTask(db, { id: 'not-a-task-id' as never }), 'InvalidInput');
      left(await createTask(db, { id: taskId(), maxRevisits: 101 }), 'InvalidInput');
    });

    it('compare-and-set on the locked row: concurrent movers, one winner', async () => {
      const id = await newTaskIn(db, 'INIT');
      const [a, b] = await Promise.all([
        transitionTask(db, id, 'PLAN', { expectedFrom: 'INIT' }),
        transitionTask(db, id, 'ABORTED', { expectedFrom: 'INIT' }),
      ]);
      const outcomes = [a._tag, b._tag].sort();
      expect(outcomes).toEqual(['Left', 'Right']);
      const loser = a._tag === 'Left' ? a : b;
      expect(loser._tag === 'Left' && loser.left._tag).toBe('PhaseConflict');
      left(await transitionTask(db, taskId(), 'PLAN'), 'NotFound');
    });

    it('agrees with a model of the catalog on random move sequences', async () => {
      const step = fc.record({ to: fc.constantFrom(...TASK_PHASES), verify: fc.boolean() });
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 10 }), async (steps) => {
          const id = taskId();
          right(await createTask(db, { id, maxRevisits: 1 }));
          let phase: TaskPhase = 'INIT';
          let revisits = 0;
          let verified = false;
          for (const { to, verify } of steps) {
            if (verify && phase === 'VERIFY') {
              right(
                await recordVerificationRun(db, {
                  taskId: id,
                  stagedHash: await stagedContentHash(db, id),
                  argv: ['true'],
                  sandboxProfile: 'p',
                  exitCode: 0,
                  durationMs: 0,
                }),
              );
              verified = true;
            }
            const result = await transitionTask(db, id, to);
            const legal =
              to !== phase &&
              isEdge(phase, to) &&
              !(phase === 'VERIFY' && to === 'IMPLEMENT' && revisits >= 1) &&
              !(phase === 'VERIFY' && to === 'APPROVAL_GATE' && !verified);
            expect(result._tag).toBe(legal ? 'Right' : 'Left');
            if (legal) {
              if (phase === 'VERIFY' && to === 'IMPLEMENT') revisits += 1;
              phase = to;
            }
          }
          expect((await getTask(db, id))?.phase).toBe(phase);
        }),
        { numRuns: 15 },
      );
    });
  });
}
