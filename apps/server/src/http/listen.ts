import type { Server } from "node:http";
import type { Express } from "express";
import { ConfigError } from "../config.js";
import { expressServer } from "./express-server.js";

/** Listens, or says which setting stops it (a port in use, an address not of this machine). */
export async function listen(app: Express, port: number, host: string): Promise<Server> {
  const server = expressServer(app);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "EADDRINUSE") {
      throw new ConfigError(
        "PORT",
        String(port),
        `already in use on ${host}; choose another, or 0 for a free one`,
      );
    }
    if (code === "EACCES") {
      throw new ConfigError(
        "PORT",
        String(port),
        `this process may not listen on it (EACCES); use a port above 1023`,
      );
    }
    if (
      code === "EADDRNOTAVAIL" ||
      code === "ENOTFOUND" ||
      code === "EAI_AGAIN" ||
      code === "EINVAL"
    ) {
      throw new ConfigError(
        "HOST",
        host,
        `cannot listen there (${code}); use an address of this machine such as 127.0.0.1, or 0.0.0.0 for all`,
      );
    }
    throw err;
  }
  return server;
}
