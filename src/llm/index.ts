export type { JsonFailureKind, JsonReply, JsonRequest } from "./json.js";
export { parseJsonObject, requestJson } from "./json.js";
export { createLanguageModel } from "./model.js";
export type { NoProvider, ProviderApi, ProviderChoice, ProviderId, ProviderInfo, ProviderSelection } from "./providers.js";
export {
  CONFIGURE_HINT,
  DEFAULT_TIMEOUT_SECONDS,
  describeSelection,
  PROVIDER_IDS,
  PROVIDERS,
  providerInfo,
  selectProvider,
} from "./providers.js";
