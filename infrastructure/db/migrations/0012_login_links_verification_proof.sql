CREATE TABLE "login_links" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "domains" ADD COLUMN "verified_by" text;--> statement-breakpoint
ALTER TABLE "domains" ADD COLUMN "verified_reason" text;--> statement-breakpoint
ALTER TABLE "ingest_messages" ADD COLUMN "quarantine_domain" text;--> statement-breakpoint
ALTER TABLE "login_links" ADD CONSTRAINT "login_links_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "login_links_user_id_index" ON "login_links" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "ingest_messages_waiting_index" ON "ingest_messages" USING btree ("account_id","quarantine_domain") WHERE status = 'quarantined' and quarantine_code = 'domain_not_verified';--> statement-breakpoint
-- Added by hand: before this migration the TXT record was the only proof, and the domain a
-- waiting message is for was only in its reason text (infrastructure/repositories/pg-report-domains.ts).
UPDATE "domains" SET "verified_by" = 'dns_txt' WHERE "verified_at" IS NOT NULL;--> statement-breakpoint
UPDATE "ingest_messages" SET "quarantine_domain" = substring("quarantine_reason" from 'The report is for ([^ ,]+), which is not verified')
  WHERE "status" = 'quarantined' AND "quarantine_code" = 'domain_not_verified';
