import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  answerGitCredential,
  type GitCredentialDecision,
  type GitCredentialRule,
  parseGitCredentialRequest,
  type SecretMaterial,
  startGitCredentialBroker,
} from '../src/index.js';
import { handleOf, materialOf } from './helpers.js';

const TOKEN = 'git-token-value-abcdef0123456789';
const rules: GitCredentialRule[] = [
  {
    protocol: 'https',
    host: 'github.com',
    repositories: ['acme/widgets'],
    username: 'x-access-token',
    handle: handleOf('GITHUB_TOKEN'),
  },
  { protocol: 'https', host: 'git.internal:8443', repositories: null, username: 'bot', handle: handleOf('INTERNAL') },
];
const resolve = async (): Promise<SecretMaterial> => materialOf(TOKEN);

/** Runs real `git credential fill` with only our helper configured. */
function gitFill(
  configArgs: readonly string[],
  input: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, reject) => {
    const child = spawn('git', [...configArgs, 'credential', 'fill'], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: '/nonexistent',
        GIT_TERMINAL_PROMPT: '0',
        GIT_CONFIG_NOSYSTEM: '1',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => done({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe('git credential protocol', () => {
  it('parses requests and refuses injection attempts', () => {
    expect(parseGitCredentialRequest('protocol=https\nhost=GitHub.com\npath=acme/widgets.git\n\n')).toEqual({
      _tag: 'Right',
      right: { protocol: 'https', host: 'github.com', path: 'acme/widgets.git', username: null },
    });
    expect(parseGitCredentialRequest('url=https://bot@git.internal:8443/x/y\n')).toEqual({
      _tag: 'Right',
      right: { protocol: 'https', host: 'git.internal:8443', path: 'x/y', username: 'bot' },
    });
    for (const bad of [
      'host=github.com\n',
      'protocol=https\nhost=a\rb\n',
      'protocol=https\nprotocol=http\nhost=x\n',
      'junk\n',
    ]) {
      expect(parseGitCredentialRequest(bad)._tag).toBe('Left');
    }
  });

  it('answers only allowlisted https requests', async () => {
    const ask = (input: string) => answerGitCredential('get', input, rules, resolve);
    const allowed = await ask('protocol=https\nhost=github.com\npath=acme/widgets.git\n');
    expect(allowed.output).toBe(`protocol=https\nhost=github.com\nusername=x-access-token\npassword=${TOKEN}\n`);
    expect(allowed.decision.refused).toBeNull();
    for (const input of [
      'protocol=http\nhost=github.com\npath=acme/widgets.git\n',
      'protocol=https\nhost=github.com\npath=acme/other.git\n',
      'protocol=https\nhost=github.com\n',
      'protocol=https\nhost=github.com\npath=acme/widgets/../../evil/x.git\n',
      'protocol=https\nhost=evil.example\npath=acme/widgets.git\n',
      'protocol=https\nhost=github.com.evil.example\npath=acme/widgets.git\n',
      'protocol=https\nhost=github.com\npath=acme/widgets.git\nusername=someone-else\n',
    ]) {
      const denied = await ask(input);
      expect(denied.output, input).toBe('');
      expect(denied.decision.refused, input).not.toBeNull();
    }
    expect((await ask('protocol=https\nhost=git.internal:8443\npath=any/repo\n')).output).toContain('username=bot');
    expect((await answerGitCredential('store', 'protocol=https\nhost=github.com\n', rules, resolve)).output).toBe('');
  });

  it('gives the token to real git through the helper and socket broker, and only for allowed requests', async () => {
    const decisions: GitCredentialDecision[] = [];
    const broker = await startGitCredentialBroker({ rules, resolve, onDecision: (d) => decisions.push(d) });
    try {
      const allowed = await gitFill(broker.gitConfigArgs, 'protocol=https\nhost=github.com\npath=acme/widgets.git\n\n');
      expect(allowed.stderr).toBe('');
      expect(allowed.code).toBe(0);
      expect(allowed.stdout).toContain(`password=${TOKEN}`);
      expect(allowed.stdout).toContain('username=x-access-token');
      const denied = await gitFill(
        broker.gitConfigArgs,
        'protocol=https\nhost=evil.example\npath=acme/widgets.git\n\n',
      );
      expect(denied.code).not.toBe(0);
      expect(denied.stdout + denied.stderr).not.toContain(TOKEN);
      expect(decisions.map((d) => [d.host, d.refused])).toEqual([
        ['github.com', null],
        ['evil.example', 'host not in the allowlist'],
      ]);
      // The helper command itself holds no secret.
      expect(broker.helper).not.toContain(TOKEN);
    } finally {
      await broker.close();
    }
  });
});
