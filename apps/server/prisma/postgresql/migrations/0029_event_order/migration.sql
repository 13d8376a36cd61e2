-- CreateTable
CREATE TABLE "EventOrder" (
    "platformId" TEXT NOT NULL,
    "objectId" TEXT NOT NULL,
    "seq" BIGINT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "EventOrder_pkey" PRIMARY KEY ("platformId","objectId")
);


-- The objects that already have events continue from their last one.
INSERT INTO "EventOrder" ("platformId", "objectId", "seq", "at")
SELECT "platformId", "objectId", MAX("seq"), MAX("createdAt") FROM "WebhookEvent"
GROUP BY "platformId", "objectId";
