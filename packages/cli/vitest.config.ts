import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // Each test starts CLI processes against a live sandbox; CI machines have two cores.
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
