/**
 * The host's Claude Code sign-in (a Pro or Max subscription instead of an API key). Claude Code
 * keeps it on Linux in `$CLAUDE_CONFIG_DIR/.credentials.json` (default `~/.claude`) as
 * `{"claudeAiOauth": {"accessToken", "refreshToken", "expiresAt", …}}`.
 *
 * CrustCore reads it on the host only, when a worker run starts; the access token becomes the
 * credential proxy's `authorization: Bearer …` header on the way to the provider and goes
 * nowhere else (the worker's sandbox has its own throwaway HOME and never sees the host's
 * `~/.claude`). Refreshing an expired token is Claude Code's job, not ours: CrustCore never
 * writes the user's credentials file (Claude Code may be rewriting it at the same moment), it
 * says to run `claude` once instead. macOS keeps the sign-in in the keychain; not read here.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { err, ok, type Result } from '@crustcore/kernel';
import { SecretMaterial } from '@crustcore/secrets';
import * as t from 'io-ts';

/** What the proxy adds to `anthropic-beta` for a subscription token, as Claude Code itself does. */
export const CLAUDE_OAUTH_BETA = 'oauth-2025-04-20';
/** A credentials file is a few hundred bytes; anything this large is not one. */
const MAX_FILE_BYTES = 64 * 1024;
/** Printable ASCII without spaces: what an HTTP header value can carry as a bearer token. */
const TOKEN_SHAPE = /^[\x21-\x7e]{16,4096}$/;

const CredentialsFileC = t.type({
  claudeAiOauth: t.intersection([
    t.type({ accessToken: t.string, expiresAt: t.number }),
    t.partial({ subscriptionType: t.union([t.string, t.null]) }),
  ]),
});

export interface ClaudeSignIn {
  readonly token: SecretMaterial;
  readonly expiresAtMs: number;
  /** `pro`, `max`… as Claude Code recorded it; null when it did not. */
  readonly subscription: string | null;
  readonly path: string;
}

export type ClaudeSignInProblem =
  | { readonly _tag: 'NotSignedIn'; readonly path: string }
  | { readonly _tag: 'SignInUnreadable'; readonly path: string; readonly reason: string }
  | { readonly _tag: 'SignInExpired'; readonly path: string; readonly expiredAtMs: number };

/** Where Claude Code keeps its sign-in for this environment. */
export function claudeSignInPath(env: Readonly<Record<string, string | undefined>>): string {
  const configured = env.CLAUDE_CONFIG_DIR;
  const home = env.HOME !== undefined && env.HOME !== '' ? env.HOME : homedir();
  const directory = configured !== undefined && isAbsolute(configured) ? configured : join(home, '.claude');
  return join(directory, '.credentials.json');
}

function readSmallFile(path: string): Result<ClaudeSignInProblem, string> {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return err({ _tag: 'NotSignedIn', path });
    return err({ _tag: 'SignInUnreadable', path, reason: code ?? 'cannot open' });
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return err({ _tag: 'SignInUnreadable', path, reason: 'not a regular file' });
    if (stat.size > MAX_FILE_BYTES) return err({ _tag: 'SignInUnreadable', path, reason: 'larger than 64 KiB' });
    const buffer = Buffer.alloc(stat.size);
    const read = readSync(fd, buffer, 0, stat.size, 0);
    return ok(buffer.subarray(0, read).toString('utf8'));
  } finally {
    closeSync(fd);
  }
}

/** The sign-in, if there is one that can be used now. */
export function readClaudeSignIn(
  env: Readonly<Record<string, string | undefined>>,
  nowMs: number,
): Result<ClaudeSignInProblem, ClaudeSignIn> {
  const path = claudeSignInPath(env);
  const text = readSmallFile(path);
  if (text._tag === 'Left') return text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.right);
  } catch {
    return err({ _tag: 'SignInUnreadable', path, reason: 'not JSON' });
  }
  const decoded = CredentialsFileC.decode(parsed);
  if (decoded._tag === 'Left') return err({ _tag: 'SignInUnreadable', path, reason: 'no claudeAiOauth sign-in in it' });
  const oauth = decoded.right.claudeAiOauth;
  if (!TOKEN_SHAPE.test(oauth.accessToken))
    return err({ _tag: 'SignInUnreadable', path, reason: 'the access token has an unexpected shape' });
  if (oauth.expiresAt <= nowMs) return err({ _tag: 'SignInExpired', path, expiredAtMs: oauth.expiresAt });
  const token = SecretMaterial.fromText(oauth.accessToken);
  if (token._tag === 'Left') return err({ _tag: 'SignInUnreadable', path, reason: 'the access token is unusable' });
  return ok({ token: token.right, expiresAtMs: oauth.expiresAt, subscription: oauth.subscriptionType ?? null, path });
}

/** One line for the user: what is wrong and what to do. */
export function describeClaudeSignInProblem(problem: ClaudeSignInProblem): { message: string; fix: string } {
  const keyFix = 'or export ANTHROPIC_API_KEY=… (or `crustcore secret set ANTHROPIC_API_KEY`)';
  switch (problem._tag) {
    case 'NotSignedIn':
      return {
        message: 'the claude backend needs a model API key or a Claude Code sign-in',
        fix: `sign in to Claude Code on this machine (run \`claude\`, then /login: CrustCore uses that sign-in), ${keyFix}`,
      };
    case 'SignInExpired':
      return {
        message: `your Claude Code sign-in expired at ${new Date(problem.expiredAtMs).toISOString()} (${problem.path})`,
        fix: `run \`claude\` once to refresh it, ${keyFix}`,
      };
    case 'SignInUnreadable':
      return {
        message: `cannot use the Claude Code sign-in in ${problem.path}: ${problem.reason}`,
        fix: `sign in again with \`claude\` (/login), ${keyFix}`,
      };
  }
}
