export const packageName = '@crustcore/state';
