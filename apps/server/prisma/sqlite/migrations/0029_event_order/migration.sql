-- CreateTable (WITHOUT ROWID: its small rows live in their key's B-tree, so
-- an event's insert changes one tree here, not a table and its key index)
CREATE TABLE "EventOrder" (
    "platformId" TEXT NOT NULL,
    "objectId" TEXT NOT NULL,
    "seq" BIGINT NOT NULL,
    "at" DATETIME NOT NULL,

    PRIMARY KEY ("platformId", "objectId")
) WITHOUT ROWID;


-- The objects that already have events continue from their last one.
INSERT INTO "EventOrder" ("platformId", "objectId", "seq", "at")
SELECT "platformId", "objectId", MAX("seq"), MAX("createdAt") FROM "WebhookEvent"
GROUP BY "platformId", "objectId";
