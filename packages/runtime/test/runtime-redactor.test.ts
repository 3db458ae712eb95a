/**
 * The runtime's redactor (ledger, MCP results, daemon log and database
 * errors): token detectors always, plus exact matching of the credentials
 * this process holds in credential-named environment variables, whatever
 * their shape.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRuntimeRedactor } from '../src/index.js';

const home = mkdtempSync(join(tmpdir(), 'crustcore-redactor-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('loadRuntimeRedactor', () => {
  it('hides credential-named environment values, even ones no detector recognizes', async () => {
    const plain = 'correct-horse-battery-staple-42';
    const { redact, registered } = await loadRuntimeRedactor(home, {
      PATH: '/usr/bin:/bin',
      MY_SERVICE_TOKEN: plain,
      DEPLOY_API_KEY: 'another plain value 9',
      HOME: '/home/someone-long-enough',
    });
    expect(registered).toBe(2);
    const out = redact(`token=${plain}; key=another plain value 9; home=/home/someone-long-enough`);
    expect(out).not.toContain(plain);
    expect(out).not.toContain('another plain value 9');
    expect(out).toContain('[REDACTED:MY_SERVICE_TOKEN]');
    // Ordinary variables are left alone.
    expect(out).toContain('/home/someone-long-enough');
  });

  it('still runs the token detectors with an empty environment', async () => {
    const { redact } = await loadRuntimeRedactor(home, {});
    const token = `ghp_${'a1B2c3D4e5'.repeat(4).slice(0, 36)}`;
    expect(redact(`leaked ${token}`)).not.toContain(token);
  });
});
