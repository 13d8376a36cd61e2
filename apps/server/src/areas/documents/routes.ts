import type { Handlers } from "../../http/operations.js";
import type { DocumentService } from "./service.js";

export function documentRoutes(
  documents: DocumentService,
): Handlers<
  "uploadDocument" | "listDocuments" | "getDocument" | "replaceDocument" | "deleteDocument"
> {
  return {
    uploadDocument: async ({ body, fileNames }, ctx) => ({
      status: 201,
      body: await documents.upload(ctx, body, fileNames.file),
    }),
    listDocuments: async ({ query }, ctx) => ({
      status: 200,
      body: await documents.list(ctx, query),
    }),
    getDocument: async ({ params }, ctx) => ({
      status: 200,
      body: await documents.get(ctx, params.documentId),
    }),
    replaceDocument: async ({ params, body, fileNames }, ctx) => ({
      status: 200,
      body: await documents.replace(ctx, params.documentId, body, fileNames.file),
    }),
    deleteDocument: async ({ params }, ctx) => {
      await documents.delete(ctx, params.documentId);
      return { status: 204 };
    },
  };
}
