/**
 * A kernel restored from its own snapshot (through the bytes a snapshot frame
 * stores) is the same kernel: same state hash, and it answers every later
 * event exactly as the kernel that stepped through the whole history — for
 * random event sequences (the kernel's property driver), cut at a random point.
 */
import { canonicalJson, createKernel, encodeActions, type Json, LATEST_KERNEL_FLAGS } from '@crustcore/kernel';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Driver, intentArb } from '../../kernel/test/driver.js';
import { decodeKernelState, restoreKernel } from '../src/index.js';

const config = { defaultMaxRevisits: 3, flags: LATEST_KERNEL_FLAGS };
const throughBytes = (value: Json): Json => JSON.parse(canonicalJson(value)) as Json;

describe('kernel state codec', () => {
  it('a restored kernel answers the rest of any history as the original did', () => {
    fc.assert(
      fc.property(fc.array(intentArb, { minLength: 1, maxLength: 60 }), fc.nat(), (intents, cutAt) => {
        const driver = new Driver(createKernel(config));
        driver.run(intents);
        const cut = cutAt % (driver.log.length + 1);
        const before = createKernel(config);
        for (const { event } of driver.log.slice(0, cut)) before.step(event);
        const restored = restoreKernel(config, throughBytes(before.snapshot()));
        if (restored._tag === 'Left') throw new Error(restored.left);
        const kernel = restored.right;
        expect(kernel.stateHash()).toBe(before.stateHash());
        for (const { event, actions } of driver.log.slice(cut)) {
          expect(encodeActions(kernel.step(event))).toBe(encodeActions(actions));
        }
        expect(kernel.stateHash()).toBe(driver.kernel.stateHash());
      }),
      { numRuns: 300 },
    );
  });

  it('drops task fields the state hash does not cover, and refuses an approval filed under another id', () => {
    const driver = new Driver(createKernel(config));
    driver.run(intentsForOneApproval());
    const state = JSON.parse(canonicalJson(driver.kernel.snapshot())) as {
      tasks: Record<string, Record<string, unknown>>;
      approvals: Record<string, Record<string, unknown>>;
    };
    const [taskId] = Object.keys(state.tasks);
    const [approvalId] = Object.keys(state.approvals);
    if (taskId === undefined || approvalId === undefined) throw new Error('the driver made no task or approval');

    const extra = structuredClone(state);
    (extra.tasks[taskId] as Record<string, unknown>).approvedByMagic = true;
    const decoded = decodeKernelState(extra);
    expect(decoded._tag).toBe('Right');
    if (decoded._tag === 'Right') expect(decoded.right.tasks[0]?.[1]).not.toHaveProperty('approvedByMagic');

    const moved = structuredClone(state);
    moved.approvals[`${approvalId}x`] = moved.approvals[approvalId] as Record<string, unknown>;
    delete moved.approvals[approvalId];
    expect(decodeKernelState(moved)).toMatchObject({ _tag: 'Left', left: expect.stringMatching(/another id/) });

    expect(decodeKernelState({ ...state, jobs: undefined })._tag).toBe('Left');
    expect(decodeKernelState('{"v":1')._tag).toBe('Left');
  });
});

function intentsForOneApproval() {
  return [
    { i: 'create', t: 0, mode: 'ask', canAsk: true, fail: false },
    { i: 'ready', t: 0 },
    { i: 'planned', t: 0 },
    { i: 'propose', t: 0, p: 0, risky: false },
    { i: 'verified', t: 0, p: 0 },
  ] as Parameters<Driver['run']>[0];
}
