ALTER TABLE "daily_rollups" ADD COLUMN "spf_pass" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "daily_rollups" ADD COLUMN "dkim_pass" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "daily_rollups" ADD COLUMN "forwarded" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "daily_rollups" ADD COLUMN "dkim_domains" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "daily_rollups" ADD COLUMN "spf_domains" text[] DEFAULT '{}'::text[] NOT NULL;