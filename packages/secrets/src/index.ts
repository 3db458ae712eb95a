export const packageName = '@crustcore/secrets';
