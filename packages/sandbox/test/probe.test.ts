import { describe, expect, it } from 'vitest';
import { diagnoseBubblewrapFailure, probeSandbox } from '../src/index.js';

const open = { unprivilegedUsernsClone: null, apparmorRestrictUnprivilegedUserns: null, maxUserNamespaces: '15000' };

describe('probeSandbox', () => {
  it('finds bubblewrap working here by running /bin/true under it', async () => {
    const probe = await probeSandbox();
    // CI and dev machines must have bubblewrap: this fails (never skips) without it.
    expect(probe.bubblewrap).toMatchObject({
      works: true,
      problem: null,
      fix: null,
      path: expect.stringMatching(/bwrap$/),
    });
    expect(probe.bubblewrap.detail).toContain('/bin/true');
    expect(probe.recommended).toBe('bubblewrap');
    expect(probe.processJail).toMatchObject({ works: true, isolation: 'process-jail' });
    expect(probe.processJail.detail).toContain('weaker');
  });
});

describe('diagnoseBubblewrapFailure', () => {
  it('names the kernel switch and the sysctl that fixes it', () => {
    expect(
      diagnoseBubblewrapFailure('bwrap: No permissions to creating new namespace', {
        ...open,
        unprivilegedUsernsClone: '0',
      }),
    ).toEqual({
      problem: 'UserNamespacesDisabled',
      fix: 'sysctl -w kernel.unprivileged_userns_clone=1',
    });
    const apparmor = diagnoseBubblewrapFailure('bwrap: setting up uid map: Permission denied', {
      ...open,
      apparmorRestrictUnprivilegedUserns: '1',
    });
    expect(apparmor.problem).toBe('AppArmorRestrictsUserNamespaces');
    expect(apparmor.fix).toContain('kernel.apparmor_restrict_unprivileged_userns=0');
    expect(diagnoseBubblewrapFailure('', { ...open, maxUserNamespaces: '0' }).problem).toBe('MaxUserNamespacesZero');
    const other = diagnoseBubblewrapFailure('bwrap: Creating new namespace failed: Operation not permitted\n', open);
    expect(other.problem).toBe('BwrapFailed');
    expect(other.fix).toContain('Creating new namespace failed');
  });
});
