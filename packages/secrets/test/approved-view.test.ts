import { type ApprovalId, makeId, type ToolCallId } from '@crustcore/kernel';
import { describe, expect, it } from 'vitest';
import { ApprovedSecretView, SecretHandle, SecretMaterial } from '../src/index.js';

const handle = (() => {
  const made = SecretHandle.create('DEPLOY_TOKEN');
  if (made._tag === 'Left') throw new Error('setup');
  return made.right;
})();
const call: ToolCallId = makeId('ToolCallId', 'call-1');
const otherCall: ToolCallId = makeId('ToolCallId', 'call-2');
const approval: ApprovalId = makeId('ApprovalId', 'approval-1');

function grant(expiresAtMs = 1_000): { view: ApprovedSecretView; material: SecretMaterial } {
  const made = SecretMaterial.fromText('deploy-token-value-123456');
  if (made._tag === 'Left') throw new Error('setup');
  return {
    view: ApprovedSecretView.grant({
      handle,
      material: made.right,
      toolCallId: call,
      approvalId: approval,
      expiresAtMs,
    }),
    material: made.right,
  };
}

describe('ApprovedSecretView', () => {
  it('lends the secret once, to the approved tool call, then disposes it', async () => {
    const { view, material } = grant();
    const first = await view.use(call, 10, (m) => m.expose().length);
    expect(first).toEqual({ _tag: 'Right', right: 25 });
    expect(material.disposed).toBe(true);
    const second = await view.use(call, 11, (m) => m.expose());
    expect(second).toEqual({ _tag: 'Left', left: { _tag: 'SecretViewAlreadyUsed', toolCallId: call } });
    expect(view.used).toBe(true);
  });

  it('refuses another tool call without consuming the view', async () => {
    const { view } = grant();
    const wrong = await view.use(otherCall, 10, () => 'never');
    expect(wrong).toEqual({
      _tag: 'Left',
      left: { _tag: 'SecretViewWrongToolCall', expected: call, actual: otherCall },
    });
    expect((await view.use(call, 10, () => 'ok'))._tag).toBe('Right');
  });

  it('refuses after expiry and disposes the material', async () => {
    const { view, material } = grant(100);
    const late = await view.use(call, 100, () => 'never');
    expect(late._tag === 'Left' && late.left._tag).toBe('SecretViewExpired');
    expect(material.disposed).toBe(true);
  });

  it('refuses a concurrent second use and disposes even when the consumer throws', async () => {
    const { view, material } = grant();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = view.use(call, 1, async () => {
      await gate;
      throw new Error('tool failed');
    });
    const second = await view.use(call, 1, () => 'again');
    expect(second._tag === 'Left' && second.left._tag).toBe('SecretViewAlreadyUsed');
    release();
    await expect(first).rejects.toThrow('tool failed');
    expect(material.disposed).toBe(true);
  });

  it('revoke() disposes without use; the view prints and serializes nothing secret', () => {
    const { view, material } = grant();
    expect(String(view)).toBe('ApprovedSecretView(secret://DEPLOY_TOKEN for c_call-1)');
    expect(() => JSON.stringify(view)).toThrow(TypeError);
    view.revoke();
    expect(material.disposed).toBe(true);
    // @ts-expect-error — a plain object cannot stand in for a view.
    const typeCheck = (): Promise<unknown> => ({ use: () => undefined }) satisfies ApprovedSecretView;
    expect(typeof typeCheck).toBe('function');
  });
});
