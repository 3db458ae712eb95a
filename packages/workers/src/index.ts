export const packageName = '@crustcore/workers';
