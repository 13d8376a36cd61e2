// Renders the reference from this server's own copy of the spec, whose servers
// name this sandbox's base URL. The page reaches no other host, as it is read
// offline and in air-gapped CI: telemetry is off, and images are kept local.

// Redoc 3 always shows its maker's logo in the sidebar, loaded from Redocly's
// CDN, and has no option to leave it out. So an image from another host gets
// an empty source instead: Redoc takes the logo as failed and shows none. React
// sets an image's source both as an attribute and as a property.
function isLocal(url) {
  const { origin, protocol } = new URL(String(url), document.baseURI);
  return origin === location.origin || protocol === "data:" || protocol === "blob:";
}
const src = Object.getOwnPropertyDescriptor(HTMLImageElement.prototype, "src");
Object.defineProperty(HTMLImageElement.prototype, "src", {
  ...src,
  set(url) {
    src.set.call(this, isLocal(url) ? url : "");
  },
});
const setAttribute = Element.prototype.setAttribute;
HTMLImageElement.prototype.setAttribute = function (name, value) {
  const offSite = name.toLowerCase() === "src" && !isLocal(value);
  setAttribute.call(this, name, offSite ? "" : value);
};

// Each operation's `x-permission` (the API token permission it needs) is shown
// under its heading; Redoc shows only the extensions it is told to.
const { init } = await import("/docs/redoc.standalone.js");
// The same page shows the API (/docs) and the magic-value tables (/docs/magic-values).
const magicValues = location.pathname.replace(/\/$/, "") === "/docs/magic-values";
const spec = magicValues ? "/docs/magic-values.json" : "/openapi.yaml";
init(
  spec,
  { disableTelemetry: true, showExtensions: ["x-permission"] },
  document.getElementById("redoc"),
);
