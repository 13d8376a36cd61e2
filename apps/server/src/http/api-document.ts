// The OpenAPI document as the router and its helpers read it: its own module,
// so that the helpers (array-query, request-fields, permissions) need not
// import the router that imports them.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The parts of an OpenAPI document this router reads. */
export interface ApiDocument {
  paths: Record<string, Record<string, Json>>;
  components?: Record<string, Record<string, Json>>;
  [key: string]: unknown;
}
