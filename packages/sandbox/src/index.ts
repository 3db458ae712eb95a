export const packageName = '@crustcore/sandbox';
