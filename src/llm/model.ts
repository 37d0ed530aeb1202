import type { LanguageModel } from "ai";
import type { ProviderSelection } from "./providers.js";

/**
 * Builds the AI SDK model of a selection. The provider packages load on first use, so commands
 * that never call a model do not pay for them. OpenAI goes through its chat completions endpoint
 * (`openai.chat`), like every OpenAI-compatible server, so the JSON arrives in the message content.
 */
export async function createLanguageModel(s: ProviderSelection): Promise<LanguageModel> {
  switch (s.api) {
    case "anthropic": {
      const { createAnthropic } = await import("@ai-sdk/anthropic");
      return createAnthropic(withKey(s))(s.model);
    }
    case "openai": {
      const { createOpenAI } = await import("@ai-sdk/openai");
      return createOpenAI(withKey(s)).chat(s.model);
    }
    case "google": {
      const { createGoogleGenerativeAI } = await import("@ai-sdk/google");
      return createGoogleGenerativeAI(withKey(s))(s.model);
    }
    case "groq": {
      const { createGroq } = await import("@ai-sdk/groq");
      return createGroq(withKey(s))(s.model);
    }
    case "openai-compatible": {
      const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
      const provider = createOpenAICompatible({
        name: s.provider,
        baseURL: s.baseURL ?? "",
        ...(s.apiKey ? { apiKey: s.apiKey } : {}),
      });
      return provider.chatModel(s.model);
    }
    default: {
      const never: never = s.api;
      throw new Error(`unknown provider api ${String(never)}`);
    }
  }
}

function withKey(s: ProviderSelection): { apiKey?: string; baseURL?: string } {
  return { ...(s.apiKey ? { apiKey: s.apiKey } : {}), ...(s.baseURL ? { baseURL: s.baseURL } : {}) };
}
