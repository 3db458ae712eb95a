export const packageName = '@crustcore/confine';
