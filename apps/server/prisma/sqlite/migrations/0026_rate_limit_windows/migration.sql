-- DropTable
PRAGMA foreign_keys=off;
DROP TABLE "RateLimitEvent";
PRAGMA foreign_keys=on;

-- CreateTable
CREATE TABLE "RateLimit" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "times" TEXT NOT NULL
);

