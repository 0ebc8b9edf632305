CREATE TABLE "spf_proposals" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "spf_proposals_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"account_id" uuid NOT NULL,
	"domain_id" bigint NOT NULL,
	"status" text NOT NULL,
	"from_record" text,
	"to_record" text NOT NULL,
	"before" jsonb,
	"after" jsonb NOT NULL,
	"reason" text NOT NULL,
	"actor" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"decided_at" timestamp with time zone,
	"decided_by" text,
	"write_id" uuid
);
--> statement-breakpoint
ALTER TABLE "dns_provider_connections" ADD COLUMN "read_failed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "dns_provider_connections" ADD COLUMN "read_error" text;--> statement-breakpoint
ALTER TABLE "spf_proposals" ADD CONSTRAINT "spf_proposals_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "spf_proposals" ADD CONSTRAINT "spf_proposals_domain_id_domains_id_fk" FOREIGN KEY ("domain_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "spf_proposals_domain_id_created_at_index" ON "spf_proposals" USING btree ("domain_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "spf_proposals_one_waiting_key" ON "spf_proposals" USING btree ("domain_id") WHERE "spf_proposals"."status" = 'proposed';