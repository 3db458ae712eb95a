/**
 * Reading the host's Claude Code sign-in (claude-sign-in.ts): where it is, what is used, and
 * the line a user sees when it cannot be used (missing, expired, damaged), each naming both ways
 * out (`claude` to sign in or refresh, or an API key).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { claudeSignInPath, describeClaudeSignInProblem, readClaudeSignIn } from '../src/index.js';

const scratch = mkdtempSync(join(tmpdir(), 'crustcore-claude-sign-in-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const NOW = 1_800_000_000_000;
const TOKEN = 'sk-ant-oat01-test-token-0123456789abcdef';
let made = 0;

function homeWith(credentials: string | null): Record<string, string> {
  made += 1;
  const home = join(scratch, `home-${made}`);
  mkdirSync(join(home, '.claude'), { recursive: true });
  if (credentials !== null) writeFileSync(join(home, '.claude', '.credentials.json'), credentials, { mode: 0o600 });
  return { HOME: home };
}

const signedIn = (expiresAt: number, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({
    claudeAiOauth: { accessToken: TOKEN, refreshToken: 'r', expiresAt, scopes: ['user:inference'], ...extra },
  });

describe('the Claude Code sign-in', () => {
  it('is read from ~/.claude, or from CLAUDE_CONFIG_DIR when that is absolute', () => {
    expect(claudeSignInPath({ HOME: '/home/me' })).toBe('/home/me/.claude/.credentials.json');
    expect(claudeSignInPath({ HOME: '/home/me', CLAUDE_CONFIG_DIR: '/etc/claude-me' })).toBe(
      '/etc/claude-me/.credentials.json',
    );
    // A relative CLAUDE_CONFIG_DIR would depend on the working directory: the default instead.
    expect(claudeSignInPath({ HOME: '/home/me', CLAUDE_CONFIG_DIR: 'rel' })).toBe('/home/me/.claude/.credentials.json');
  });

  it('gives the token and the subscription while it has not expired', () => {
    const read = readClaudeSignIn(homeWith(signedIn(NOW + 60_000, { subscriptionType: 'max' })), NOW);
    if (read._tag === 'Left') throw new Error(JSON.stringify(read.left));
    expect(read.right.token.expose()).toBe(TOKEN);
    expect(read.right.subscription).toBe('max');
    expect(read.right.expiresAtMs).toBe(NOW + 60_000);
    // The material never prints or serializes itself.
    expect(String(read.right.token)).not.toContain(TOKEN);
    expect(() => JSON.stringify(read.right)).toThrow(/cannot be serialized/);
  });

  it('says what to do when there is none, when it expired, and when it is damaged', () => {
    const cases = [
      [homeWith(null), 'NotSignedIn', /needs a model API key or a Claude Code sign-in/],
      [homeWith(signedIn(NOW)), 'SignInExpired', /expired at/],
      [homeWith('{"claudeAiOauth": '), 'SignInUnreadable', /not JSON/],
      [homeWith('{"other": {}}'), 'SignInUnreadable', /no claudeAiOauth/],
      [
        homeWith(JSON.stringify({ claudeAiOauth: { accessToken: 'two words', expiresAt: NOW + 1 } })),
        'SignInUnreadable',
        /unexpected shape/,
      ],
      [homeWith(`${signedIn(NOW + 1)}${' '.repeat(70_000)}`), 'SignInUnreadable', /64 KiB/],
    ] as const;
    for (const [env, tag, message] of cases) {
      const read = readClaudeSignIn(env, NOW);
      expect(read._tag, tag).toBe('Left');
      if (read._tag === 'Right') continue;
      expect(read.left._tag).toBe(tag);
      const said = describeClaudeSignInProblem(read.left);
      expect(said.message).toMatch(message);
      expect(said.fix).toMatch(/`claude`/);
      expect(said.fix).toContain('ANTHROPIC_API_KEY');
    }
  });

  it('refuses a directory or a FIFO in its place instead of hanging on it', () => {
    const env = homeWith(null);
    mkdirSync(join(env.HOME as string, '.claude', '.credentials.json'));
    const read = readClaudeSignIn(env, NOW);
    expect(read._tag === 'Left' && read.left._tag).toBe('SignInUnreadable');
    const fifoHome = homeWith(null);
    const fifo = join(fifoHome.HOME as string, '.claude', '.credentials.json');
    execFileSync('mkfifo', [fifo]);
    const viaFifo = readClaudeSignIn(fifoHome, NOW);
    expect(viaFifo._tag === 'Left' && viaFifo.left._tag).toBe('SignInUnreadable');
    // A symlink to a real file is the user's own choice (dotfile managers): followed.
    const linked = homeWith(null);
    const target = join(scratch, `target-${made}.json`);
    writeFileSync(target, signedIn(NOW + 1));
    symlinkSync(target, join(linked.HOME as string, '.claude', '.credentials.json'));
    expect(readClaudeSignIn(linked, NOW)._tag).toBe('Right');
  });
});
