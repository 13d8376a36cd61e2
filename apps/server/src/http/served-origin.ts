import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { API_BASE_PATH } from "../config.js";

/**
 * The origin of the links the server hands out: PUBLIC_BASE_URL when set,
 * else the address it listens on, known only once it listens. The services
 * are made before that, so they are handed these readers, not the value.
 */
export class ServedOrigin {
  private value: string;

  constructor(publicBaseUrl: string | undefined) {
    this.value = publicBaseUrl?.replace(/\/+$/, "") ?? "";
  }

  /** e.g. http://127.0.0.1:3000 */
  readonly origin = (): string => this.value;

  /** The origin and the version segment: what clients use as their base URL. */
  readonly apiBaseUrl = (): string => `${this.value}${API_BASE_PATH}`;

  /** The server listens: without PUBLIC_BASE_URL, the origin is where (a wildcard host as localhost). */
  listening(server: Server, host: string): void {
    const { port } = server.address() as AddressInfo;
    const shown = host === "0.0.0.0" || host === "::" ? "localhost" : host;
    this.value ||= `http://${shown}:${port}`;
  }
}
