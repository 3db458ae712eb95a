/**
 * `crustcore mcp approve NAME [--yes]`: a person's trust-on-first-use step.
 * Starts the server once (in its sandbox, in an empty scratch directory),
 * shows every tool's definition — for one that changed since its pin, the
 * diff — and with `--yes` pins them and marks the server trusted. New tools
 * annotated read-only get `allow`; others get the record's default policy.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../cli/command.js';
import { ExitCode } from '../cli/exit-codes.js';
import { writeLine } from '../cli/output.js';
import { fail, type RegistryContext, save } from './mcp-registry-context.js';

export async function approveServer(context: RegistryContext): Promise<ExitCode> {
  const { pack, io } = context;
  const [name] = context.positionals;
  if (name === undefined) throw new UsageError('mcp approve NAME [--yes]');
  const record = pack.findServer(context.registry, name);
  if (record === undefined)
    return fail(io, { _tag: 'UnknownServer', message: `no server named ${name}; crustcore mcp list shows them` });
  const scratch = mkdtempSync(join(tmpdir(), 'crustcore-mcp-approve-'));
  const opened = await pack.ServerSession.open({ record, credential: null, worktree: scratch });
  if (opened._tag === 'Left') {
    rmSync(scratch, { recursive: true, force: true });
    return fail(io, opened.left);
  }
  const live = opened.right.tools().map((checked) => checked.tool);
  await opened.right.close();
  rmSync(scratch, { recursive: true, force: true });
  writeLine(io.stdout, `${name}: ${live.length} tool(s)`);
  for (const tool of live) {
    const checked = pack.checkTool(record, tool);
    const status = checked.status;
    const label = status.kind === 'approved' ? 'unchanged' : status.kind === 'changed' ? 'CHANGED' : 'new';
    writeLine(
      io.stdout,
      `\n[${label}] ${tool.name}${tool.annotations?.readOnlyHint === true ? ' (read-only hint)' : ''}`,
    );
    if (status.kind === 'changed') writeLine(io.stdout, status.diff);
    else writeLine(io.stdout, JSON.stringify(checked.definition, null, 2));
  }
  if (!context.values.yes) {
    writeLine(io.stdout, `\nnothing recorded; run crustcore mcp approve ${name} --yes to pin these definitions`);
    return ExitCode.ok;
  }
  const approved = pack.approveTools(record, live, (tool) =>
    tool.annotations?.readOnlyHint === true ? 'allow' : record.defaultPolicy,
  );
  const code = save(context, pack.replaceServer(context.registry, approved));
  if (code === ExitCode.ok)
    writeLine(io.stdout, `\npinned ${live.length} tool definition(s) of ${name}; it is trusted`);
  return code;
}
