export const packageName = '@crustcore/ledger';
