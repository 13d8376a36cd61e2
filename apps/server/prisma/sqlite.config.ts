// Prisma CLI configuration for the sqlite schema: the JavaScript schema engine
// through a driver adapter, because the native engine binaries cannot be
// downloaded on our machines.
import { defineConfig } from "prisma/config";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";

export default defineConfig({
  engine: "js",
  experimental: { adapter: true },
  schema: "sqlite/schema.prisma",
  adapter: async () =>
    new PrismaBetterSQLite3({ url: process.env.DATABASE_URL ?? "file::memory:" }),
});
