/**
 * @crustcore/secrets — typed secrets, the stores that keep them, the
 * redactor that keeps them out of model-visible text, and the ways a tool
 * gets a credential without holding it (credential proxy first).
 */
export {
  ApprovedSecretView,
  type SecretViewError,
  type SecretViewGrant,
} from './approved-view.js';
export {
  isSecretHandle,
  looksLikeRawSecret,
  parseSecretName,
  parseSecretReference,
  SECRET_URI_PREFIX,
  SecretHandle,
  type SecretHandleError,
  type SecretName,
  SecretReferenceC,
  type SecretReferenceError,
  type SecretUri,
} from './handle.js';
export {
  type CredentialProxy,
  type CredentialProxyError,
  type CredentialProxyOptions,
  type ProxyListen,
  type ProxyRequestInfo,
  type ProxyRequestRecord,
  startCredentialProxy,
} from './inject/credential-proxy.js';
export { buildInjectedEnv, EnvInjection, type EnvInjectionError } from './inject/env.js';
export {
  answerGitCredential,
  type GitCredentialBroker,
  type GitCredentialBrokerOptions,
  type GitCredentialDecision,
  type GitCredentialError,
  type GitCredentialRequest,
  type GitCredentialRule,
  matchGitCredentialRule,
  parseGitCredentialRequest,
  type ResolveSecret,
  startGitCredentialBroker,
} from './inject/git-credential.js';
export { type SecretFileOptions, secretStdin, withSecretFile } from './inject/handoff.js';
export { type CredentialHeaderOptions, type HeaderInjectionError, withCredentialHeader } from './inject/headers.js';
export {
  KEYCHAIN_SERVICE,
  type KeychainProbe,
  probeSecretTool,
  SecretToolKeychain,
  type SecretToolOptions,
} from './keychain/secret-tool.js';
export { isSecretMaterial, MAX_SECRET_BYTES, SecretMaterial, type SecretMaterialError } from './material.js';
export { isModelVisibleText, ModelVisibleText, TaintedText, taint } from './model-visible.js';
export { promptSecret, readSecretFromPipe, type SecretInputError, type SecretInputStream } from './prompt.js';
export {
  type CrashRedactionOptions,
  formatRedactedError,
  installCrashRedaction,
  RedactedError,
  redactError,
} from './redact/crash.js';
export {
  characterClassCount,
  DETECTOR_IDS,
  DETECTORS,
  type Detector,
  type DetectorId,
  looksLikePlaceholder,
  shannonEntropy,
} from './redact/detectors.js';
export { MAX_FRAGMENTED_SECRET_LENGTH, MIN_FORM_LENGTH, secretForms, secretFragments } from './redact/forms.js';
export {
  DEFAULT_FRAGMENT_LENGTH,
  type Finding,
  type IncrementalOptions,
  IncrementalRedactor,
  MAX_PENDING_CHARS,
  MIN_REDACTABLE_SECRET_LENGTH,
  type RedactableInput,
  type RedactionReport,
  Redactor,
  type RedactorError,
  type RedactorOptions,
} from './redact/redactor.js';
export { RedactingStream } from './redact/stream.js';
export {
  type AvailabilityStatus,
  describeAvailability,
  type SecretAvailability,
  type SecretStore,
  type StoredSecret,
} from './store.js';
export { describeStoreError, type StoreError, type VaultError } from './vault/errors.js';
export { FileVault, type FileVaultOptions } from './vault/file-vault.js';
export { DEFAULT_SCRYPT, MAX_VAULT_BYTES, type ScryptParams, VAULT_FORMAT_VERSION } from './vault/format.js';
export type { VaultKeySource } from './vault/key.js';
export {
  defaultVaultPath,
  openUnattendedVault,
  registerVaultSecrets,
  type UnattendedVault,
  vaultSecret,
} from './vault/unattended.js';
