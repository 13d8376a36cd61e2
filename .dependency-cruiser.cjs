// The module structure `npm run lint` holds the code to (issue 47): no import
// circles in the server or the packages, and the server's layers import only
// downwards. Run: npx depcruise apps/server/src packages/*/src --config .dependency-cruiser.cjs

const SERVER = "^apps/server/src/";

// apps/server/src, top to bottom. A module may import from its own folder and
// from the layers below its own; areas/* import one another freely, so do
// http/ and signing/, and platform/, events/, jobs/ and limits/ (no circles).
const LAYERS = [
  { name: "main", modules: ["main.ts", "index.ts"] },
  { name: "server", modules: ["server.ts"] },
  { name: "api-handlers", modules: ["api-handlers.ts", "area-services.ts"] },
  { name: "areas", folders: ["areas"] },
  { name: "http and signing", folders: ["http", "signing"] },
  { name: "platform, events, jobs and limits", folders: ["platform", "events", "jobs", "limits"] },
  { name: "db and crypto", folders: ["db", "crypto"] },
  {
    name: "leaf modules",
    modules: [
      "clock.ts",
      "config.ts",
      "errors.ts",
      "ids.ts",
      "kept.ts",
      "threads.ts",
      "logger.ts",
      "paths.ts",
      "requests-in-flight.ts",
    ],
  },
];

const escape = (name) => name.replace(/[.]/g, "\\.");

/** A path pattern matching every module of the given layers. */
function pathOf(layers) {
  const parts = layers.flatMap((layer) => [
    ...(layer.folders ?? []).map((folder) => `${folder}/`),
    ...(layer.modules ?? []).map((module) => `${escape(module)}$`),
  ]);
  return `${SERVER}(${parts.join("|")})`;
}

// One rule per layer: nothing it holds imports a layer above it. Tests are
// left out of these (a test may reach anything it exercises) but are still
// cruised, so the circle rule sees them.
const layerRules = LAYERS.slice(1).map((layer, index) => ({
  name: `layer-${layer.name.replace(/[^a-z]+/g, "-")}`,
  comment: `${layer.name} must not import ${LAYERS.slice(0, index + 1)
    .map((above) => above.name)
    .join(", ")} (layers of apps/server/src, top to bottom)`,
  severity: "error",
  from: { path: pathOf([layer]), pathNot: "\\.test\\.ts$" },
  to: { path: pathOf(LAYERS.slice(0, index + 1)) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment:
        "A module circle (type-only imports included): give the shared piece a module of its own, or pass it in",
      severity: "error",
      from: { path: "^(apps/server/src|packages/[^/]+/src)/" },
      to: { circular: true },
    },
    ...layerRules,
  ],
  options: {
    // Imports of other packages resolve into their builds: not cruised.
    doNotFollow: { path: ["node_modules", "(^|/)dist/"] },
    // Type-only imports count: a circle of types is still a circle of modules.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.base.json" },
    // NodeNext: sources import each other as `./x.js`; where no such file
    // exists, dependency-cruiser resolves it to `./x.ts`, as tsc does.
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
    },
  },
};
