export { startServer, type RunningServer, type StartOptions } from "./server.js";
export { loadConfig, type Config, API_VERSION, API_BASE_PATH } from "./config.js";
export { ManualClock, systemClock, type Clock } from "./clock.js";
