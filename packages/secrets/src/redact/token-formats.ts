/**
 * Provider tokens recognised by their own shape: a fixed prefix (or another
 * fixed part), an alphabet and a length. Formats are public facts from each
 * provider's documentation and announcements; every quantifier is bounded,
 * and no two adjacent quantified parts share characters unless a literal
 * separates them, so a sticky match attempt is linear in its bound.
 *
 * Exact-length tokens must not be followed by another alphabet character (a
 * longer run is something else: a hash, a blob). Open-ended tokens are
 * redacted up to their bound instead: failing closed beats leaking a key.
 */
import {
  ALNUM,
  after,
  BASE64URL,
  type Detector,
  DIGITS,
  HEX_LOWER,
  oneOf,
  type TokenSpec,
  tokenDetector,
} from './detector-model.js';
import { lettersAndDigits, looksLikeExampleToken, notExampleAfter, randomAfter, randomMixed } from './value-checks.js';

const AN = 'A-Za-z0-9';
const B64U = 'A-Za-z0-9_\\-';

/** A prefixed token: `prefix` then `body`; accepted unless the body is an example. */
function prefixed(
  id: TokenSpec['id'],
  prefixes: readonly string[],
  body: string,
  maxBody: number,
  notFollowedBy: string | null,
  extra: Partial<Pick<TokenSpec, 'accept' | 'trigger'>> = {},
): Detector {
  const longest = Math.max(...prefixes.map((p) => p.length));
  const shortest = Math.min(...prefixes.map((p) => p.length));
  return tokenDetector({
    id,
    prefixes,
    token: `${oneOf(prefixes)}${body}`,
    maxLength: longest + maxBody,
    notFollowedBy,
    accept: extra.accept ?? notExampleAfter(shortest),
    ...(extra.trigger === undefined ? {} : { trigger: extra.trigger }),
  });
}

/** Accepts when the value's body mixes letters and digits and is not an example. */
const mixedAfter = randomAfter;

/** OpenAI-style keys: mixed case and digits, or (other vendors on `sk-`) a long hex run. */
const openAiLike = (value: string): boolean =>
  !looksLikeExampleToken(value.slice(3)) && (randomMixed(value) || /[0-9a-f]{32}/.test(value));

const GITHUB: Detector[] = [
  prefixed('github-token', ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'], `[${AN}]{36,251}`, 251, null, {
    accept: mixedAfter(4),
  }),
  prefixed('github-token', ['github_pat_'], `[${AN}_]{22,244}`, 244, null),
];

const GITLAB_PREFIXES = [
  'glpat-',
  'gldt-',
  'glrt-',
  'glrtr-',
  'glptt-',
  'glft-',
  'glimt-',
  'glagent-',
  'glcbt-',
  'glsoat-',
  'gloas-',
  'glffct-',
  'glwt-',
];

const CODE_HOSTS: Detector[] = [
  ...GITHUB,
  prefixed('gitlab-token', GITLAB_PREFIXES, `[${B64U}.]{20,300}`, 300, null, { accept: mixedAfter(5) }),
  prefixed('gitlab-token', ['GR1348941'], `[${B64U}]{20,64}`, 64, null, { accept: mixedAfter(9) }),
  prefixed('atlassian-token', ['ATATT3', 'ATCTT3'], `[${B64U}=]{150,250}`, 250, null),
  prefixed('atlassian-token', ['ATBB'], `[${AN}]{28,40}`, 40, AN, { accept: mixedAfter(4) }),
  prefixed('docker-hub-token', ['dckr_pat_', 'dckr_oat_'], `[${B64U}]{27,40}`, 40, B64U),
  prefixed('buildkite-token', ['bkua_'], '[0-9a-f]{40}', 40, AN),
  prefixed('circleci-token', ['CCIPAT_'], `[${AN}]{22}_[0-9a-f]{40}`, 63, AN),
  prefixed('sonarqube-token', ['squ_', 'sqp_', 'sqa_'], '[0-9a-f]{40}', 40, AN),
  prefixed('sourcegraph-token', ['sgp_'], '(?:local_)?[0-9a-f]{40}', 46, AN),
  prefixed('jfrog-token', ['AKCp'], `[${AN}]{60,80}`, 80, AN, { accept: mixedAfter(4) }),
  prefixed('jfrog-token', ['cmVmdGtu'], `[${AN}]{56,64}`, 64, AN),
];

const PACKAGE_REGISTRIES: Detector[] = [
  prefixed('npm-token', ['npm_'], `[${AN}]{36}`, 36, AN, { accept: mixedAfter(4) }),
  // A macaroon: base64 of a serialized "pypi.org" (or test.pypi.org) location, then caveats and a signature.
  prefixed('pypi-token', ['pypi-AgEIcHlwaS5vcmc', 'pypi-AgENdGVzdC5weXBpLm9yZw'], `[${B64U}]{50,1000}`, 1000, null, {
    trigger: 'pypi-',
  }),
  prefixed('rubygems-key', ['rubygems_'], '[0-9a-f]{48}', 48, AN),
  prefixed('nuget-key', ['oy2'], '[a-z0-9]{43}', 43, AN, { accept: mixedAfter(3) }),
];

const AI_PROVIDERS: Detector[] = [
  prefixed('anthropic-key', ['sk-ant-'], `[${B64U}]{20,250}`, 250, null, {
    accept: (v) => randomMixed(v) && !looksLikeExampleToken(v.slice(7)),
  }),
  prefixed('openai-key', ['sk-'], `(?:proj-|svcacct-|admin-)?[${B64U}]{20,250}`, 258, null, { accept: openAiLike }),
  // User access tokens are letters only: accept mixed case rather than demand digits.
  prefixed('huggingface-token', ['hf_'], `[${AN}]{34}`, 34, AN, {
    accept: (v) => /[a-z]/.test(v) && /[A-Z]/.test(v) && !looksLikeExampleToken(v.slice(3)),
  }),
  prefixed('huggingface-token', ['api_org_'], `[${AN}]{34}`, 34, AN),
  prefixed('groq-key', ['gsk_'], `[${AN}]{52}`, 52, AN),
  prefixed('xai-key', ['xai-'], `[${AN}]{80}`, 80, AN),
  prefixed('perplexity-key', ['pplx-'], `[${AN}]{48}`, 48, AN),
  prefixed('replicate-token', ['r8_'], `[${AN}]{37}`, 37, AN, { accept: mixedAfter(3) }),
  prefixed('langsmith-key', ['lsv2_pt_', 'lsv2_sk_'], '[0-9a-f]{32}_[0-9a-f]{10}', 43, AN),
  prefixed('pinecone-key', ['pcsk_'], `[${AN}]{4,10}_[${AN}]{40,80}`, 91, AN),
];

const CLOUDS: Detector[] = [
  prefixed(
    'aws-access-key-id',
    ['AKIA', 'ASIA', 'ABIA', 'ACCA', 'AGPA', 'AIDA', 'AIPA', 'ANPA', 'ANVA', 'APKA', 'AROA', 'ASCA'],
    '[A-Z2-7]{16}',
    16,
    AN,
  ),
  prefixed('google-api-key', ['AIza'], '[0-9A-Za-z_-]{35}', 35, B64U),
  prefixed('google-oauth', ['GOCSPX-'], `[${B64U}]{28}`, 28, B64U),
  prefixed('google-oauth', ['ya29.'], `[${B64U}.]{30,2000}`, 2000, null, { trigger: 'ya29.' }),
  prefixed('digitalocean-token', ['dop_v1_', 'doo_v1_', 'dor_v1_'], '[0-9a-f]{64}', 64, AN),
  prefixed('alibaba-access-key', ['LTAI'], `[${AN}]{20}`, 20, AN, { accept: mixedAfter(4) }),
  prefixed('databricks-token', ['dapi'], '[0-9a-f]{32}(?:-[0-9])?', 34, AN),
  prefixed('heroku-key', ['HRKU-'], `[${B64U}]{58,64}`, 64, B64U),
  prefixed('flyio-token', ['fo1_'], `[${B64U}]{43}`, 43, B64U),
  prefixed('netlify-token', ['nfp_'], `[${AN}]{36}`, 36, AN),
  prefixed('render-key', ['rnd_'], `[${AN}]{32}`, 32, AN, { accept: mixedAfter(4) }),
  prefixed('supabase-key', ['sbp_'], '[0-9a-f]{40}', 40, AN),
  prefixed('supabase-key', ['sb_secret_'], `[${B64U}]{31,64}`, 64, B64U),
  prefixed('planetscale-token', ['pscale_tkn_', 'pscale_pw_', 'pscale_oauth_'], `[${B64U}.]{32,64}`, 64, null),
  prefixed('pulumi-token', ['pul-'], '[0-9a-f]{40}', 40, AN),
  prefixed('tailscale-key', ['tskey-'], `[a-z]{3,8}-[${AN}]{6,20}-[${AN}]{20,64}`, 94, AN),
  prefixed('vault-token', ['hvs.', 'hvb.', 'hvr.'], `[${B64U}]{24,250}`, 250, null, { accept: mixedAfter(4) }),
  prefixed(
    'doppler-token',
    ['dp.pt.', 'dp.st.', 'dp.sa.', 'dp.ct.', 'dp.scim.', 'dp.audit.'],
    `(?:[a-z0-9_-]{1,40}\\.)?[${AN}]{40,44}`,
    85,
    AN,
  ),
  tokenDetector({
    id: 'terraform-token',
    prefixes: [],
    token: '[a-z0-9]{14}\\.atlasv1\\.[a-z0-9_=-]{60,70}',
    maxLength: 14 + 9 + 70,
    notFollowedBy: 'a-z0-9_=-',
    anchors: [after('.atlasv1.', `${DIGITS}abcdefghijklmnopqrstuvwxyz`, 14)],
  }),
  tokenDetector({
    id: 'azure-client-secret',
    prefixes: [],
    // Three characters, a digit, then "Q~": Entra ID (Azure AD) application secrets.
    token: '[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}',
    maxLength: 40,
    notFollowedBy: 'A-Za-z0-9_~.-',
    anchors: [after('Q~', `${ALNUM}_~.`, 4)],
    accept: (v) => lettersAndDigits(v) && !looksLikeExampleToken(v.slice(6)),
  }),
];

const PAYMENTS: Detector[] = [
  prefixed('stripe-key', ['sk_live_', 'sk_test_', 'rk_live_', 'rk_test_'], `[${AN}]{20,250}`, 250, null, {
    accept: mixedAfter(8),
  }),
  prefixed('stripe-key', ['whsec_'], `[${AN}]{32,64}`, 64, AN, { accept: mixedAfter(6) }),
  prefixed('square-token', ['sq0atp-'], `[${B64U}]{22}`, 22, B64U),
  prefixed('square-token', ['sq0csp-'], `[${B64U}]{43}`, 43, B64U),
  prefixed('square-token', ['EAAA'], `[${B64U}]{60}`, 60, B64U, { accept: mixedAfter(4) }),
  prefixed('shopify-token', ['shpat_', 'shpss_', 'shpca_', 'shppa_'], '[a-fA-F0-9]{32}', 32, AN),
  prefixed('flutterwave-key', ['FLWSECK_TEST-', 'FLWSECK-'], '[a-h0-9]{32}-X', 34, AN),
  prefixed('easypost-key', ['EZAK', 'EZTK'], `[${AN}]{54}`, 54, AN),
  prefixed('shippo-key', ['shippo_live_', 'shippo_test_'], '[0-9a-f]{40}', 40, AN),
];

const MESSAGING: Detector[] = [
  prefixed(
    'slack-token',
    ['xoxb-', 'xoxp-', 'xoxa-', 'xoxo-', 'xoxs-', 'xoxr-', 'xoxe-', 'xoxe.'],
    `[${AN}.-]{10,250}`,
    250,
    null,
    {
      accept: (v) => /[0-9]/.test(v) && !looksLikeExampleToken(v.slice(5)),
    },
  ),
  prefixed('slack-token', ['xapp-'], `[0-9]-[${AN}-]{10,250}`, 252, null),
  prefixed('sendgrid-key', ['SG.'], `[${B64U}]{22}\\.[${B64U}]{43}`, 66, B64U),
  prefixed('twilio-key', ['AC', 'SK'], '[0-9a-f]{32}', 32, AN),
  tokenDetector({
    id: 'telegram-bot-token',
    prefixes: [],
    token: `[0-9]{5,16}:A[${B64U}]{34}`,
    maxLength: 16 + 36,
    notFollowedBy: B64U,
    anchors: [after(':A', DIGITS, 16)],
    accept: (v) => lettersAndDigits(v.slice(v.indexOf(':') + 1)),
  }),
  tokenDetector({
    id: 'discord-bot-token',
    // The first part is the bot's numeric id in base64, so it starts with one of these pairs.
    prefixes: ['MT', 'Mj', 'Mz', 'ND', 'NT', 'Nj', 'Nz', 'OD', 'OT'],
    token: `[MNO][${B64U}]{23,27}\\.[${B64U}]{6,7}\\.[${B64U}]{27,40}`,
    maxLength: 28 + 8 + 41,
    notFollowedBy: B64U,
  }),
  prefixed('mailgun-key', ['key-'], '[0-9a-z]{32}', 32, AN, { accept: mixedAfter(4) }),
  tokenDetector({
    id: 'mailchimp-key',
    prefixes: [],
    token: '[0-9a-f]{32}-us[0-9]{1,2}',
    maxLength: 37,
    notFollowedBy: AN,
    anchors: [after('-us', HEX_LOWER, 32)],
  }),
  prefixed('brevo-key', ['xkeysib-'], `[0-9a-f]{64}-[${AN}]{16}`, 81, AN),
  prefixed('resend-key', ['re_'], `[${AN}]{8}_[${AN}]{24}`, 33, AN, { accept: mixedAfter(3) }),
  tokenDetector({
    id: 'firebase-fcm-key',
    prefixes: [],
    token: `AAAA[${B64U}]{7}:APA91b[${B64U}]{120,160}`,
    maxLength: 11 + 7 + 160,
    notFollowedBy: B64U,
    anchors: [after(':APA91b', BASE64URL, 11)],
  }),
];

const SAAS: Detector[] = [
  prefixed('linear-key', ['lin_api_'], `[${AN}]{40}`, 40, AN),
  prefixed('linear-key', ['lin_oauth_'], '[0-9a-f]{64}', 64, AN),
  prefixed('postman-key', ['PMAK-'], '[0-9a-f]{24}-[0-9a-f]{34}', 59, AN),
  prefixed('notion-token', ['ntn_'], `[0-9]{11}[${AN}]{35}`, 46, AN),
  prefixed('notion-token', ['secret_'], `[${AN}]{43}`, 43, AN, { accept: (v) => randomMixed(v.slice(7)) }),
  prefixed('airtable-token', ['pat'], `[${AN}]{14}\\.[0-9a-f]{64}`, 79, AN),
  prefixed('contentful-token', ['CFPAT-'], `[${B64U}]{43}`, 43, B64U),
  prefixed('figma-token', ['figd_'], `[${B64U}]{40}`, 40, B64U),
  prefixed('mapbox-secret-token', ['sk.eyJ'], `[${B64U}]{20,400}\\.[${B64U}]{20,100}`, 501, B64U),
  prefixed('sentry-token', ['sntrys_eyJ'], '[A-Za-z0-9+/=_-]{60,400}', 400, null),
  prefixed('sentry-token', ['sntryu_'], '[0-9a-f]{64}', 64, AN),
  prefixed('grafana-token', ['glc_'], '[A-Za-z0-9+/]{32,400}={0,2}', 402, null),
  prefixed('grafana-token', ['glsa_'], `[${AN}]{32}_[0-9a-fA-F]{8}`, 41, AN),
  prefixed('newrelic-key', ['NRAK-'], '[A-Z0-9]{27}', 27, AN),
  prefixed('newrelic-key', ['NRJS-'], '[0-9a-f]{19}', 19, AN),
  prefixed('newrelic-key', ['NRII-'], `[${B64U}]{32}`, 32, B64U),
  prefixed('dynatrace-token', ['dt0c01.'], '[A-Z0-9]{24}\\.[A-Z0-9]{64}', 89, AN),
  prefixed('onepassword-token', ['ops_eyJ'], '[A-Za-z0-9+/=_-]{100,2000}', 2000, null, { trigger: 'ops_eyJ' }),
  prefixed('prefect-key', ['pnu_'], `[${AN}]{36}`, 36, AN),
  prefixed('readme-key', ['rdme_'], '[a-z0-9]{70}', 70, AN),
  prefixed('typeform-token', ['tfp_'], `[${AN}_.=-]{55,64}`, 64, null),
  prefixed('age-secret-key', ['AGE-SECRET-KEY-1'], '[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}', 58, AN),
];

/** Every shape-recognised provider token, grouped by kind of provider. */
export const TOKEN_FORMAT_DETECTORS: readonly Detector[] = [
  ...CODE_HOSTS,
  ...PACKAGE_REGISTRIES,
  ...AI_PROVIDERS,
  ...CLOUDS,
  ...PAYMENTS,
  ...MESSAGING,
  ...SAAS,
];
