import { SANDBOX_UMA_PROVIDERS, type SandboxUmaProvider } from "@payments-sandbox/sandbox-rules";
import type { Schemas } from "@payments-sandbox/client";
import type { Handlers } from "../../http/operations.js";
import { pageOfList } from "../../http/pagination.js";
import { currencyInfo } from "../quotes/exchange-rates.js";

// GET /uma-providers: the sandbox's fixed directory of UMA providers
// (packages/sandbox-rules), filtered and paged like any list.

type UmaProvider = Schemas["UmaProvider"];

function toUmaProvider(provider: SandboxUmaProvider): UmaProvider {
  return {
    name: provider.name,
    domain: provider.domain,
    supportedRegions: [...provider.supportedRegions],
    supportedCurrencies: provider.supportedCurrencies.map((code) => currencyInfo(code) ?? { code }),
    lei: provider.lei,
    allowListStatus: provider.allowListed,
  };
}

export function umaProviderRoutes(): Handlers<"getAvailableUmaProviders"> {
  return {
    getAvailableUmaProviders: ({ query }) => {
      const country = query.countryCode?.toUpperCase();
      const currency = query.currencyCode?.toUpperCase();
      const matching = SANDBOX_UMA_PROVIDERS.filter(
        (p) =>
          (country === undefined || p.supportedRegions.includes(country)) &&
          (currency === undefined || p.supportedCurrencies.includes(currency)) &&
          // Blocked providers are listed unless the caller says otherwise.
          (query.hasBlockedProviders !== false || p.allowListed),
      );
      const ordered = [...matching].sort((a, b) => a.listedAt.localeCompare(b.listedAt));
      if (query.sortOrder === "desc") ordered.reverse();
      const page = pageOfList(ordered, query.limit, query.cursor, toUmaProvider);
      return Promise.resolve({ status: 200, body: { ...page, totalCount: ordered.length } });
    },
  };
}
