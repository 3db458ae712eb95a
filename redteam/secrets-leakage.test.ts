/**
 * The roadmap's ten secret-leakage attempts (P8 "Required tests"). Each one
 * pushes a secret at the redactor interface the named boundary calls, in the
 * spellings an attacker or an accident would use, and asserts that nothing
 * of the secret survives. Boundary → interface:
 *
 *  1. model output (assistant text, streamed deltas)  → IncrementalRedactor / redact() → ModelVisibleText
 *  2. shell stdout (a real process)                   → RedactingStream on the pipe
 *  3. stderr (a real process, byte-by-byte writes)    → RedactingStream on the pipe
 *  4. environment dump (`env` in a real process)      → RedactingStream (registered + detectors)
 *  5. panic (uncaught exception, real child process)  → installCrashRedaction
 *  6. tool error (Error with cause chain)             → redactError / formatRedactedError, then redact()
 *  7. GitHub API error (real 127.0.0.1 HTTP error)    → formatRedactedError on the client's error object
 *  8. Telegram message draft                          → redactText() before sending
 *  9. external worker transcript (JSONL stream)       → RedactingStream over the worker's stdout bytes
 * 10. MCP result (JSON-RPC result object)             → redactJson() for storage, redact() for the model
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text as readAll } from 'node:stream/consumers';
import {
  formatRedactedError,
  type ModelVisibleText,
  RedactingStream,
  Redactor,
  redactError,
  SecretHandle,
  SecretMaterial,
  secretForms,
  taint,
} from '@crustcore/secrets';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Built at run time so no token-shaped literal sits in the repository.
const API_KEY = ['s', 'k-', 'proj-', 'Zr81mQ', 'x7Lp2V', 'c9Wd4T', 'b6Nh0K', 'f3Jy5R'].join('');
const DB_PASSWORD = 'Tr0ub4dor&3"quoted\\slash';
const GITHUB_TOKEN = ['g', 'hp_', 'R4nd0mL00k1ngT0k3nV4lu3F0rT35t1ngXyZq'].join('');

function registered(): Redactor {
  const redactor = new Redactor();
  for (const [name, value] of [
    ['OPENAI_API_KEY', API_KEY],
    ['DB_PASSWORD', DB_PASSWORD],
  ] as const) {
    const handle = SecretHandle.create(name);
    const material = SecretMaterial.fromText(value);
    if (handle._tag === 'Left' || material._tag === 'Left') throw new Error('setup');
    const result = redactor.register(handle.right, material.right);
    if (result._tag === 'Left') throw new Error(result.left._tag);
    material.right.dispose();
  }
  return redactor;
}

/** Nothing of any secret may survive: no registered form, no raw token, no long fragment. */
function assertNoLeak(output: string): void {
  for (const secret of [API_KEY, DB_PASSWORD, GITHUB_TOKEN]) {
    expect(output).not.toContain(secret);
    for (const form of secretForms(secret)) expect(output).not.toContain(form);
    // No 12-character window of the raw secret either.
    for (let at = 0; at + 12 <= secret.length; at++) expect(output).not.toContain(secret.slice(at, at + 12));
  }
}

/** The model boundary: only ModelVisibleText gets in. */
const toModel = (text: ModelVisibleText): string => text.text;

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a real process; its stdout and stderr each pass through a RedactingStream, as the runner's output will. */
function runRedacted(redactor: Redactor, argv: readonly string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const stdout = readAll(child.stdout.pipe(new RedactingStream(redactor)));
    const stderr = readAll(child.stderr.pipe(new RedactingStream(redactor)));
    child.on('error', reject);
    child.on('close', (code) => {
      Promise.all([stdout, stderr]).then(([out, err]) => resolve({ code, stdout: out, stderr: err }), reject);
    });
  });
}

const baseEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' };

describe('secret leakage attempts', () => {
  const redactor = registered();

  it('1. model output: the key spelled raw, base64, hex, URL-encoded, split across streamed deltas', () => {
    const attempt = [
      `Sure! The key is ${API_KEY}.`,
      `In base64: ${Buffer.from(API_KEY).toString('base64')}`,
      `Hex: ${Buffer.from(API_KEY).toString('hex')}`,
      `As a URL: https://x.test/?k=${encodeURIComponent(API_KEY)}`,
      `Inside a blob: ${Buffer.concat([Buffer.from('{"k":"'), Buffer.from(API_KEY), Buffer.from('"}')]).toString('base64')}`,
      `In two halves: ${API_KEY.slice(0, 16)} … and … ${API_KEY.slice(16)}`,
      `Cut short: ${API_KEY.slice(0, -1)}`,
    ].join('\n');
    // Deltas of 1–7 characters, as a model stream delivers them.
    const incremental = redactor.createIncremental();
    let streamed = '';
    for (let at = 0, size = 1; at < attempt.length; at += size, size = (size % 7) + 1) {
      streamed += incremental.push(attempt.slice(at, at + size));
    }
    streamed += incremental.end();
    assertNoLeak(streamed);
    expect(streamed).toBe(redactor.redactText(attempt));
    const visible = toModel(redactor.redact(taint(attempt)));
    assertNoLeak(visible);
    expect(visible).toContain('[REDACTED:OPENAI_API_KEY]');
  });

  it('2. shell stdout: a real process prints the key in several encodings', async () => {
    const run = await runRedacted(
      redactor,
      [
        'sh',
        '-c',
        'printf "%s\\n" "$K"; printf "%s" "$K" | base64; printf "%s" "$K" | od -An -tx1 | tr -d " \\n"; echo',
      ],
      { ...baseEnv, K: API_KEY },
    );
    expect(run.code).toBe(0);
    assertNoLeak(run.stdout);
    expect(run.stdout).toContain('[REDACTED:OPENAI_API_KEY]');
  });

  it('3. stderr: a real process writes the secret one byte per write', async () => {
    const run = await runRedacted(
      redactor,
      ['sh', '-c', 'printf "%s\\n" "$K" | fold -w1 | while IFS= read -r c; do printf "%s" "$c" >&2; done; echo >&2'],
      { ...baseEnv, K: DB_PASSWORD },
    );
    expect(run.code).toBe(0);
    assertNoLeak(run.stderr);
    expect(run.stderr).toContain('[REDACTED:DB_PASSWORD]');
  });

  it('4. environment dump: `env` of a process holding registered and unregistered credentials', async () => {
    const run = await runRedacted(redactor, ['env'], {
      ...baseEnv,
      INNOCENT_NAME: API_KEY,
      DATABASE_URL: `postgres://app:${encodeURIComponent(DB_PASSWORD)}@db:5432/app`,
      GITHUB_TOKEN,
    });
    expect(run.code).toBe(0);
    assertNoLeak(run.stdout);
    expect(run.stdout).toContain('INNOCENT_NAME=[REDACTED:OPENAI_API_KEY]');
    expect(run.stdout).toContain('GITHUB_TOKEN=[REDACTED:github-token]');
  });

  it('5. panic: an uncaught exception in a real node process prints only the redacted report', async () => {
    const entry = join(import.meta.dirname, '..', 'packages', 'secrets', 'src', 'index.ts');
    const script = `
      import { Redactor, SecretHandle, SecretMaterial, installCrashRedaction } from ${JSON.stringify(entry)};
      const redactor = new Redactor();
      const handle = SecretHandle.create('OPENAI_API_KEY');
      const material = SecretMaterial.fromText(process.env.K);
      redactor.register(handle.right, material.right);
      if (process.env.INSTALL === '1') installCrashRedaction(redactor);
      const cause = new Error('upstream said: invalid key ' + process.env.K);
      setTimeout(() => { throw new Error('request with key ' + process.env.K + ' failed', { cause }); }, 0);
    `;
    const run = (install: string): Promise<Run> =>
      new Promise((resolve, reject) => {
        const child = spawn(
          process.execPath,
          ['--conditions=source', '--import', 'tsx', '--input-type=module', '-e', script],
          { env: { ...process.env, K: API_KEY, INSTALL: install }, stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (c: Buffer) => {
          stdout += c.toString();
        });
        child.stderr.on('data', (c: Buffer) => {
          stderr += c.toString();
        });
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
    const [guarded, unguarded] = await Promise.all([run('1'), run('0')]);
    // Without the handler Node prints the raw error: the attempt is real.
    expect(unguarded.stderr).toContain(API_KEY);
    expect(guarded.code).toBe(70);
    assertNoLeak(guarded.stderr + guarded.stdout);
    expect(guarded.stderr).toContain('request with key [REDACTED:OPENAI_API_KEY] failed');
    expect(guarded.stderr).toContain('invalid key [REDACTED:OPENAI_API_KEY]');
  }, 30_000);

  it('6. tool error: message, stack, cause chain and extra fields', () => {
    const cause = new Error(`psql: FATAL: password authentication failed for "${DB_PASSWORD}"`);
    const error = Object.assign(new Error(`tool run_sql failed with key ${API_KEY}`, { cause }), {
      argv: ['psql', `--password=${DB_PASSWORD}`],
      env: { OPENAI_API_KEY: API_KEY },
    });
    const printed = formatRedactedError(error, redactor);
    assertNoLeak(printed);
    const rebuilt = redactError(error, redactor);
    assertNoLeak(`${rebuilt.message}\n${rebuilt.stack}\n${rebuilt.details}\n${String(rebuilt.cause)}`);
    // What the model is told about the failure.
    const visible = toModel(redactor.redact(taint(`Tool error: ${error.message}; caused by ${cause.message}`)));
    assertNoLeak(visible);
  });

  describe('7. GitHub API error', () => {
    let server: Server;
    let origin: string;
    beforeAll(async () => {
      server = createServer((req, res) => {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: 'Bad credentials', received: req.headers.authorization }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('the error object an API client builds (request headers, echoed body) prints redacted', async () => {
      const headers = { authorization: `token ${GITHUB_TOKEN}`, accept: 'application/vnd.github+json' };
      const response = await fetch(`${origin}/repos/acme/widgets/pulls`, { headers });
      const body = (await response.json()) as Record<string, unknown>;
      const error = Object.assign(new Error(`HttpError: ${String(body.message)} - ${JSON.stringify(body)}`), {
        status: response.status,
        request: { method: 'GET', url: `${origin}/repos/acme/widgets/pulls`, headers },
        response: { data: body },
      });
      const printed = formatRedactedError(error, redactor);
      assertNoLeak(printed);
      expect(printed).toContain('Bad credentials');
      expect(printed).toContain('[REDACTED:github-token]');
    });
  });

  it('8. Telegram message draft: secrets in a code block, a link and a quoted config line', () => {
    const draft = [
      'Deployed! Config used:',
      '```',
      `OPENAI_API_KEY=${API_KEY}`,
      `db password: "${DB_PASSWORD}"`,
      '```',
      `[dashboard](https://dash.test/login?token=${encodeURIComponent(API_KEY)})`,
      `> ${JSON.stringify({ password: DB_PASSWORD })}`,
    ].join('\n');
    const sent = redactor.redactText(draft);
    assertNoLeak(sent);
    expect(sent).toContain('Deployed! Config used:');
  });

  it('9. external worker transcript: a JSONL stream with JSON-escaped and base64 secrets, split anywhere', async () => {
    const events = [
      { type: 'item.started', item: { type: 'command_execution', command: 'cat .env' } },
      { type: 'item.completed', item: { output: `OPENAI_API_KEY=${API_KEY}\nDB_PASSWORD=${DB_PASSWORD}\n` } },
      { type: 'item.completed', item: { output: Buffer.from(`${DB_PASSWORD}\n${API_KEY}`).toString('base64') } },
      { type: 'agent_message', text: `I found token ${GITHUB_TOKEN} in the repo` },
    ];
    const bytes = Buffer.from(events.map((e) => JSON.stringify(e)).join('\n'));
    for (const size of [1, 5, 64, 4096]) {
      const chunks: Buffer[] = [];
      for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
      const transcript = await readAll(Readable.from(chunks).pipe(new RedactingStream(redactor)));
      assertNoLeak(transcript);
      expect(transcript.split('\n')).toHaveLength(events.length);
    }
  });

  it('10. MCP result: text content, structured content and error data', () => {
    const result = {
      jsonrpc: '2.0',
      id: 7,
      result: {
        content: [
          { type: 'text', text: `Connected with ${API_KEY}` },
          { type: 'text', text: `hex dump: ${Buffer.from(DB_PASSWORD).toString('hex').toUpperCase()}` },
        ],
        structuredContent: { credentials: { [API_KEY]: DB_PASSWORD, github: GITHUB_TOKEN } },
        isError: false,
      },
    };
    const stored = JSON.stringify(redactor.redactJson(result));
    assertNoLeak(stored);
    expect(JSON.parse(stored).id).toBe(7);
    const visible = toModel(redactor.redact(taint(JSON.stringify(result))));
    assertNoLeak(visible);
  });
});
