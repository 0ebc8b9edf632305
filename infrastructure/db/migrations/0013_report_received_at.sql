-- Hand-edited after drizzle-kit generate (the backfill statements are ours). A report's received_at
-- is when its message arrived (ingest_messages.received_at), which the API shows as `received_at`;
-- created_at stays the time the job stored it (docs/ingestion.md "Processing"). Existing rows take
-- their message's arrival, or their created_at when they have no message (TLS-RPT over HTTPS).
-- The (domain, begin) index of aggregate_reports also covers what the report list and the
-- summaries' reporters read (INCLUDE, which drizzle-kit cannot express; the schema keeps the
-- index's name and key): index-only scans instead of a heap visit per report (docs/ingestion.md).
ALTER TABLE "aggregate_reports" ADD COLUMN "received_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "forensic_reports" ADD COLUMN "received_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "tls_reports" ADD COLUMN "received_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
UPDATE "aggregate_reports" r SET "received_at" = coalesce(m."received_at", r."created_at")
  FROM "aggregate_reports" r2 LEFT JOIN "ingest_messages" m ON m."id" = r2."message_id" WHERE r2."id" = r."id";--> statement-breakpoint
UPDATE "forensic_reports" r SET "received_at" = coalesce(m."received_at", r."created_at")
  FROM "forensic_reports" r2 LEFT JOIN "ingest_messages" m ON m."id" = r2."message_id" WHERE r2."id" = r."id";--> statement-breakpoint
UPDATE "tls_reports" r SET "received_at" = coalesce(m."received_at", r."created_at")
  FROM "tls_reports" r2 LEFT JOIN "ingest_messages" m ON m."id" = r2."message_id" WHERE r2."id" = r."id";--> statement-breakpoint
DROP INDEX "aggregate_reports_domain_id_begin_at_index";--> statement-breakpoint
CREATE INDEX "aggregate_reports_domain_id_begin_at_index" ON "aggregate_reports" USING btree ("domain_id","begin_at")
  INCLUDE ("account_id","end_at","reporter_org","message_count");
