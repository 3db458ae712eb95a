export const packageName = '@crustcore/verify';
