export const packageName = '@crustcore/mcp';
