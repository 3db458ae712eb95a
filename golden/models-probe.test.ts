/**
 * `crustcore models --probe` against an OpenAI-compatible endpoint on
 * 127.0.0.1 that lists its models only to a caller with the right key. The
 * key is found the way the native agent finds it (vault, else environment)
 * and shows up only in the request header, never in the output.
 */

import { rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseEnv, cliAsync, tempDir } from './daemon-harness.js';

const KEY = `sk-probe-${'p'.repeat(20)}`;
const home = tempDir('crustcore-models-');
const seen: (string | undefined)[] = [];
let server: Server;
let registry: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    seen.push(request.headers.authorization);
    if (request.url?.startsWith('/v1/models') !== true) {
      response.writeHead(404).end();
      return;
    }
    if (request.headers.authorization !== `Bearer ${KEY}`) {
      response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"message":"bad key"}}');
      return;
    }
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ object: 'list', data: [{ id: 'probe-model', object: 'model' }] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  registry = join(home, 'models.json');
  writeFileSync(
    registry,
    JSON.stringify({
      version: 1,
      providers: [
        {
          id: 'local',
          kind: 'openai-chat',
          baseUrl: `http://127.0.0.1:${port}/v1`,
          key: 'secret://PROBE_TEST_KEY',
          models: [
            { id: 'probe-model', roles: ['implement'] },
            { id: 'not-served', roles: [] },
          ],
        },
      ],
    }),
  );
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(home, { recursive: true, force: true });
});

describe('golden: crustcore models --probe', () => {
  it('with the key in the environment: the endpoint answers; listed and unlisted models are told apart', async () => {
    const run = await cliAsync({ ...baseEnv(home), PROBE_TEST_KEY: KEY }, ['models', '--config', registry, '--probe']);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('probe ok');
    expect(run.stdout).toMatch(/listed\s+probe-model/);
    expect(run.stdout).toMatch(/not listed\s+not-served/);
    expect(run.stdout + run.stderr).not.toContain(KEY);
    expect(seen.at(-1)).toBe(`Bearer ${KEY}`);
  }, 120_000);

  it('without the key: the probe reports it, and the endpoint is not sent a guess', async () => {
    const before = seen.length;
    const run = await cliAsync(baseEnv(home), ['models', '--config', registry, '--probe', '--json']);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    const probes = (JSON.parse(run.stdout) as { probes: { ok: boolean }[] }).probes;
    expect(probes[0]?.ok).toBe(false);
    expect(seen.slice(before).every((header) => header === undefined)).toBe(true);
  }, 120_000);
});
