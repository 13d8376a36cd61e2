import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    // Generous: CI machines have two cores and run packages side by side.
    testTimeout: 30_000,
  },
});
