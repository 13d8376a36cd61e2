// Prisma CLI configuration for the postgresql schema: the JavaScript schema engine
// through a driver adapter, because the native engine binaries cannot be
// downloaded on our machines.
import { defineConfig } from "prisma/config";
import { PrismaPg } from "@prisma/adapter-pg";

export default defineConfig({
  engine: "js",
  experimental: { adapter: true },
  schema: "postgresql/schema.prisma",
  adapter: async () =>
    new PrismaPg({
      connectionString: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres",
    }),
});
