import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    setupFiles: ["test/ledgers-balanced.ts", "test/production-answers.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration files each start servers and databases: two cores, so run
    // files one after another and keep the machine responsive.
    fileParallelism: false,
  },
});
