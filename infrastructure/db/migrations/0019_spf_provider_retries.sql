ALTER TABLE "spf_proposals" ADD COLUMN "attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "spf_proposals" ADD COLUMN "last_error" text;--> statement-breakpoint
CREATE UNIQUE INDEX "spf_proposals_one_retrying_key" ON "spf_proposals" USING btree ("domain_id") WHERE "spf_proposals"."status" = 'retrying';