/**
 * What `crustcore doctor` can say about the native agent on this machine:
 * whether the model registry loads, whether the keys its default role needs
 * are in the vault, and whether the tools' helpers (ripgrep for grep, node
 * and python3 for check_syntax) are installed. Values only, no I/O beyond
 * reading the registry, the vault and PATH lookups.
 */
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { ripgrepAvailable } from '@crustcore/confine';
import { setupModel } from './model-setup.js';

export interface AgentCheck {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

function onPath(program: string, path: string | undefined): boolean {
  for (const directory of (path ?? '/usr/local/bin:/usr/bin:/bin').split(':')) {
    if (directory === '') continue;
    try {
      accessSync(join(directory, program), constants.X_OK);
      return true;
    } catch {
      // Not here.
    }
  }
  return false;
}

export async function nativeAgentChecks(options: {
  readonly home: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly modelsConfig?: string;
}): Promise<readonly AgentCheck[]> {
  const checks: AgentCheck[] = [];
  const setup = await setupModel({
    home: options.home,
    env: options.env,
    ...(options.modelsConfig === undefined ? {} : { modelsConfig: options.modelsConfig }),
  });
  if (setup._tag === 'Left' && setup.left.kind === 'no-model-key') {
    checks.push({ name: 'model registry', ok: true, detail: 'registry read; no model can run yet' });
    checks.push({ name: 'model keys', ok: false, detail: `${setup.left.message} — ${setup.left.fix ?? ''}` });
  } else if (setup._tag === 'Left') {
    checks.push({ name: 'model registry', ok: false, detail: setup.left.message });
  } else {
    checks.push({ name: 'model registry', ok: true, detail: `default model ${setup.right.label}` });
    checks.push({
      name: 'model keys',
      ok: setup.right.warnings.length === 0,
      detail:
        setup.right.warnings.length === 0
          ? 'every keyed provider has its secret in the vault'
          : setup.right.warnings.join('; '),
    });
  }
  checks.push({
    name: 'grep engine',
    ok: true,
    detail: ripgrepAvailable() ? 'ripgrep' : 'JavaScript fallback (install ripgrep for bounded-time regex search)',
  });
  for (const program of ['node', 'python3']) {
    const found = onPath(program, options.env.PATH);
    checks.push({
      name: `check_syntax: ${program}`,
      ok: found,
      detail: found ? 'installed' : `${program} not found on PATH`,
    });
  }
  return checks;
}
