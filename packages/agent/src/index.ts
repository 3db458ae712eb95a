export type { ModelUsage, ToolCallOutcome, ToolCallRequest, ToolExecution, ToolGate } from './tool-gate.js';
