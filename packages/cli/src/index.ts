export { run, usage } from "./cli.js";
export { parseDuration } from "./duration.js";
export { DEFAULT_BASE_URL, ENV } from "./context.js";
