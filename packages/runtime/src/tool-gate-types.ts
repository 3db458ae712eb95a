/**
 * The tool gate's shape, as the native agent pack defines it. Imported as
 * types only, so the CLI never loads the agent pack to implement it.
 */
export type { ModelUsage, ToolCallOutcome, ToolCallRequest, ToolExecution, ToolGate } from '@crustcore/agent';
