export const packageName = '@crustcore/agent';
