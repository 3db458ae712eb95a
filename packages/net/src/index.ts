export const packageName = '@crustcore/net';
